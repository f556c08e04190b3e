package explore

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/variants"
)

var (
	updateBugs = flag.Bool("update-bugs", false, "re-find, minimise and rewrite reports/bugs/*.json")
	onlyBug    = flag.String("bug", "", "with -update-bugs: only this bug (file name without .json)")
)

// bugsDir holds one minimised repro per bug of reports/BUGS.md.
const bugsDir = "../../reports/bugs"

// TestRegenerateBugRepros re-finds every bug of the catalogue by its
// default sweep (seeds from 1), minimises the first run that shows it
// while it still shows that bug, and writes its repro file. Run with
// -update-bugs (and -bug NAME for one) after a change that alters traces;
// then check reports/BUGS.md still tells the truth.
func TestRegenerateBugRepros(t *testing.T) {
	if !*updateBugs {
		t.Skip("run with -update-bugs to rewrite reports/bugs")
	}
	for _, e := range catalogue {
		if *onlyBug != "" && e.name != *onlyBug {
			continue
		}
		tg := e.target()
		found, ok := firstOf(t, e, 1, catalogueSeeds)
		if !ok {
			t.Errorf("%s: not found in %d seeds of %s", e.name, catalogueSeeds, e.sweepCommand())
			continue
		}
		kind := e.kind
		if _, ok := found.Verdict.First(kind); !ok && kind == model.Liveness {
			kind = model.Leftover // starved nobody, left items behind
		}
		keep := func(o Outcome) bool { return entryOf(e.variant, o) == e.name }
		m, err := MinimizeWhile(tg, found.Seed, found.Plan, kind, keep, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRepro(m.Target, m.Outcome)
		r.Minimized = true
		data, _ := r.Encode()
		path := filepath.Join(bugsDir, e.name+".json")
		if err := WriteFileAtomic(path, data); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Outcome.Verdict.First(kind)
		t.Logf("%s: seed %d, plan size %d -> %d in %d runs: %s", e.name, found.Seed, m.SizeBefore, m.SizeAfter, m.Runs, v.Story)
	}
}

// firstOfChunk is how many seeds firstOf sweeps between two looks.
const firstOfChunk = 64

// catalogueSeeds is the budget of the issue: every entry within 10,000
// seeds of its default sweep.
const catalogueSeeds = 10_000

// firstOf is the first run from seed from, within n seeds, that shows e:
// sweeps of firstOfChunk seeds at a time on every core, each history kept
// for the catalogue to read.
func firstOf(tb testing.TB, e entry, from uint64, n int) (Outcome, bool) {
	return firstIn(tb, e, e.target(), from, n)
}

// firstIn is firstOf in target tg (e's, with another scheduler).
func firstIn(tb testing.TB, e entry, tg Target, from uint64, n int) (Outcome, bool) {
	opt := DefaultOptions()
	opt.Keep = true
	for next := from; next < from+uint64(n); next += firstOfChunk {
		var hit *Outcome
		_, err := Sweep(tg, SweepOptions{From: next, Count: min(firstOfChunk, int(from+uint64(n)-next)), KeepGoing: true, Run: opt,
			OnOutcome: func(o Outcome) {
				if hit == nil && entryOf(e.variant, o) == e.name {
					hit = &o
				}
			}})
		if err != nil {
			tb.Fatal(err)
		}
		if hit != nil {
			return *hit, true
		}
	}
	return Outcome{}, false
}

// firstSeeds are where each entry first shows in its default sweep from
// seed 1 (reports/BUGS.md quotes them). TestCatalogueFirstSeeds checks
// that each seed still shows its entry; with -long, that no earlier seed
// does, and that every entry shows within catalogueSeeds.
var firstSeeds = map[string]uint64{
	"host-identity": 3, "empty-topology": 99, "quorum-replication-1": 1, "amnesia": 932, "topology": 2017,
	"no-validity": 153, "local-time": 10, "stale-topology": 1392, "data-under-lock-name": 4,
	"over-strict-quorum": 157, "partial-locks": 23, "literal-clear": 1, "clock-skew": 1,
}

// Every bug a default sweep of the original finds is an entry of the
// catalogue: nothing it shows goes unnamed in reports/BUGS.md (-long:
// catalogueSeeds seeds; else the first 300).
func TestEveryBugIsCatalogued(t *testing.T) {
	n := 300
	if *long {
		n = catalogueSeeds
	}
	opt := DefaultOptions()
	opt.Keep = true
	for _, v := range []string{"original", "original-literal"} {
		tg := entry{variant: v}.target()
		var unnamed []string
		_, err := Sweep(tg, SweepOptions{From: 1, Count: n, KeepGoing: true, Run: opt, OnOutcome: func(o Outcome) {
			if o.Failed() && entryOf(v, o) == "" && len(unnamed) < 5 {
				unnamed = append(unnamed, fmt.Sprintf("seed %d: %s\n  replay: %s", o.Seed, o.Findings[0].Story, ReplayCommand(tg, o.Seed)))
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range unnamed {
			t.Errorf("%s: a bug no entry of reports/BUGS.md names: %s", v, u)
		}
	}
}

func TestCatalogueFirstSeeds(t *testing.T) {
	for _, e := range catalogue {
		t.Run(e.name, func(t *testing.T) {
			seed, ok := firstSeeds[e.name]
			if *long {
				o, found := firstOf(t, e, 1, catalogueSeeds)
				if !found {
					t.Fatalf("%s: not shown in %d seeds of %s", e.name, catalogueSeeds, e.sweepCommand())
				}
				t.Logf("%s: first at seed %d of %s", e.name, o.Seed, e.sweepCommand())
				if o.Seed != seed {
					t.Errorf("%s first shows at seed %d, recorded %d", e.name, o.Seed, seed)
				}
				return
			}
			if !ok {
				t.Fatalf("no first seed recorded for %s", e.name)
			}
			opt := DefaultOptions()
			opt.Keep = true
			o, err := RunSeed(e.target(), seed, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := entryOf(e.variant, o); got != e.name {
				t.Errorf("seed %d of %s shows %q, want %s", seed, e.sweepCommand(), got, e.name)
			}
		})
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
	for _, e := range catalogue {
		if ref := "replay reports/bugs/" + cmp.Or(e.repro, e.name) + ".json"; !strings.Contains(string(doc), ref) {
			t.Errorf("reports/BUGS.md has no entry for %s (no %q)", e.name, ref)
		}
	}
	for _, ref := range refs {
		t.Run(filepath.Base(ref[1]), func(t *testing.T) {
			r, err := ReadRepro(filepath.Join("../..", ref[1]), variants.Lookup)
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
