package explore

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"locksim/faults"
	"locksim/model"
	"locksim/sim"
)

var (
	updateBugs = flag.Bool("update-bugs", false, "re-find, minimise and rewrite reports/bugs/*.json")
	onlyBug    = flag.String("bug", "", "with -update-bugs: only this bug (file name without .json)")
)

// bugsDir holds one minimised repro per bug of reports/BUGS.md.
const bugsDir = "../../reports/bugs"

// bugHunt says how to find one bug of the original from scratch.
type bugHunt struct {
	file   string // reports/bugs/<file>.json
	class  faults.Class
	also   faults.Class // a second class, when the bug needs two kinds of fault
	kind   model.ViolationKind
	config func(*sim.Config)
	seeds  int
}

var bugHunts = []bugHunt{
	{file: "host-identity", class: faults.ClassThreads, kind: model.MutualExclusion},
	{file: "clock-skew", class: faults.ClassSkew, kind: model.MutualExclusion},
	{file: "clock-jump", class: faults.ClassJump, kind: model.MutualExclusion},
	{file: "no-validity", class: faults.ClassPause, kind: model.MutualExclusion},
	{file: "quorum-replication-1", class: faults.ClassCrash, kind: model.MutualExclusion,
		config: func(c *sim.Config) { c.Replication = 1 }},
	// The original gives up at the first KeyAlreadyExists, so a second client
	// wins only once every node holding the first one's items is wiped or
	// down: that needs the holder to hold for a while. Critical sections of
	// 20-50s (still under the TTL) give the crashes time to line up, and a
	// plain crash keeps the last unwiped item out of reach.
	{file: "amnesia", class: faults.ClassAmnesia, also: faults.ClassCrash, kind: model.MutualExclusion, seeds: 3000,
		config: func(c *sim.Config) { c.HoldMin, c.HoldMax = 20*time.Second, 50*time.Second }},
	{file: "topology", class: faults.ClassTopology, kind: model.MutualExclusion,
		config: func(c *sim.Config) { c.Nodes = 6 }, seeds: 3000},
	{file: "partial-locks", class: faults.ClassAmbiguous, kind: model.Liveness},
}

// TestRegenerateBugRepros re-finds every bug by a default sweep, minimises
// it and writes its repro file. Run with -update-bugs after a change that
// alters traces; then check reports/BUGS.md still tells the truth.
func TestRegenerateBugRepros(t *testing.T) {
	if !*updateBugs {
		t.Skip("run with -update-bugs to rewrite reports/bugs")
	}
	for _, b := range bugHunts {
		if *onlyBug != "" && b.file != *onlyBug {
			continue
		}
		cfg := sim.DefaultConfig()
		if b.config != nil {
			b.config(&cfg)
		}
		classes := []faults.Class{b.class}
		if b.also != "" {
			classes = append(classes, b.also)
		}
		tg := Target{Variant: variant("original"), Config: cfg, Classes: classes}
		seeds := b.seeds
		if seeds == 0 {
			seeds = 500
		}
		var found *Outcome
		_, err := Sweep(tg, SweepOptions{From: 1, Count: seeds, KeepGoing: true, OnOutcome: func(o Outcome) {
			if _, ok := o.Verdict.First(b.kind); ok && found == nil {
				found = &o
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if found == nil {
			t.Errorf("%s: no %s in %d seeds of class %s", b.file, b.kind, seeds, b.class)
			continue
		}
		m, err := Minimize(tg, found.Seed, found.Plan, b.kind, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRepro(m.Target, m.Outcome)
		r.Minimized = true
		data, _ := r.Encode()
		path := filepath.Join(bugsDir, b.file+".json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Outcome.Verdict.First(b.kind)
		t.Logf("%s: seed %d, plan size %d -> %d in %d runs: %s", b.file, found.Seed, m.SizeBefore, m.SizeAfter, m.Runs, v.Story)
	}
}

// TestBugsDocumentReplays replays every counterexample reports/BUGS.md
// names, so the document cannot rot: each must still run the same way
// (its trace hash) and show its violation.
func TestBugsDocumentReplays(t *testing.T) {
	doc, err := os.ReadFile("../../reports/BUGS.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`replay (reports/bugs/[a-z0-9-]+\.json)`).FindAllStringSubmatch(string(doc), -1)
	if len(refs) == 0 {
		t.Fatal("reports/BUGS.md names no replay command")
	}
	for _, ref := range refs {
		t.Run(filepath.Base(ref[1]), func(t *testing.T) {
			r, err := ReadRepro(filepath.Join("../..", ref[1]))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Replay(r, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%016x", out.Hash); got != r.TraceHash {
				t.Errorf("%s replays with trace hash %s, recorded %s: the run takes another path", ref[1], got, r.TraceHash)
			}
			for _, want := range r.Verdict.Violations {
				if _, ok := out.Verdict.First(want.Kind); !ok {
					t.Errorf("%s no longer shows %s (%s); got %+v", ref[1], want.Kind, want.Story, out.Verdict.Violations)
				}
			}
			if len(r.Verdict.Violations) == 0 {
				t.Errorf("%s records no violation", ref[1])
			}
		})
	}
}
