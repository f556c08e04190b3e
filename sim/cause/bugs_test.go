package cause

import (
	"flag"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

var (
	updateBugs = flag.Bool("update-bugs", false, "re-find each entry of reports/BUGS.md at its first pure seed, minimise it while it stays pure, and rewrite reports/bugs/NAME.json")
	onlyBug    = flag.String("bug", "", "with -update-bugs: only this entry (its file name without .json)")
)

// bugsDir holds one minimised repro per entry of reports/BUGS.md.
const bugsDir = "../../reports/bugs"

// entry is one bug of reports/BUGS.md: the fix of the original's family
// that removes it, and which seeds show it.
type entry struct {
	name    string // reports/bugs/<name>.json
	variant string // original, or its literal reading
	fix     string // the fix whose replay alone removes its violations
	beyond  algorithm.Assumption
	// only: the entry is searched with every other fix applied
	// (cause.Only): the default sweep's frequent bugs mask it.
	only bool
	kind model.ViolationKind
	// where tells apart the bugs one fix removes (the quorum fix removes
	// three): a seed shows the entry when it is pure for fix and where
	// accepts it (nil: any).
	where func(o explore.Outcome) bool
	// cause, when set, is the cause every violation of a seed that shows
	// the entry has, instead of fix alone: an empty topology is removed by
	// the quorum fix and by pinning the topology, each alone.
	cause string
	// pending, when set, says why the entry has no pure seed and repro yet;
	// TestBugEntriesArePure skips it saying so.
	pending string
	// world, when set, narrows the sweep's worlds to those the entry lives
	// in (a field pinned, a world change), after every other fix.
	world func(*explore.Target)
}

// target is where e is searched: the default sweep of its variant (beyond
// its assumption when it needs one broken), or that with every other fix.
func (e entry) target(t testing.TB) explore.Target {
	tg := explore.DefaultTarget(variant(t, e.variant))
	if e.beyond != "" {
		tg.Beyond = []algorithm.Assumption{e.beyond}
	}
	if e.only {
		var err error
		if tg, err = Only(tg, e.fix); err != nil {
			t.Fatal(err)
		}
	}
	if e.world != nil {
		e.world(&tg)
	}
	return tg
}

// restartingVersionsWithoutZones pins versions that restart when a key is
// re-created (a quarter of the worlds draw them) and takes the time zones
// away: the reused version lives in the post's expiry, whose clocks the
// time-zone bug breaks in the same worlds.
func restartingVersionsWithoutZones(tg *explore.Target) {
	tg.Config.RestartingVersions = true
	tg.World = slices.DeleteFunc(slices.Clone(tg.World), func(f envelope.WorldField) bool { return f == envelope.WorldVersions })
	tg.Changes = append(slices.Clone(tg.Changes), algorithm.NoTimeZones)
}

// clockJump: a clock jumps (beyond the post's synchronised clocks).
func clockJump(o explore.Outcome) bool {
	return slices.ContainsFunc(o.Plan.Events, func(e faults.Event) bool { return e.Kind == faults.ClockJump })
}

// entries are reports/BUGS.md's, in its order.
var entries = []entry{
	{name: "host-identity", variant: "original", fix: "identity", kind: model.MutualExclusion},
	{name: "clock-skew", variant: "original", fix: "clock", beyond: algorithm.ClockError, kind: model.MutualExclusion},
	{name: "clock-jump", variant: "original", fix: "clock", beyond: algorithm.ClockError, kind: model.MutualExclusion, where: clockJump},
	{name: "no-validity", variant: "original", fix: "validity", kind: model.MutualExclusion},
	{name: "quorum-replication-1", variant: "original", fix: "quorum", kind: model.MutualExclusion,
		where: func(o explore.Outcome) bool { return o.Config.Replication == 1 }},
	{name: "topology", variant: "original", fix: "pinned-topology", kind: model.MutualExclusion},
	{name: "amnesia", variant: "original", fix: "amnesia", kind: model.MutualExclusion, only: true},
	{name: "partial-locks", variant: "original", fix: "partial", kind: model.Liveness},
	{name: "empty-topology", variant: "original", fix: "quorum", kind: model.MutualExclusion, cause: "quorum & pinned-topology",
		where: func(o explore.Outcome) bool {
			return slices.ContainsFunc(o.History.Moves, func(m model.Move) bool { return len(m.Nodes) == 0 })
		}},
	{name: "local-time", variant: "original", fix: "clock", kind: model.MutualExclusion,
		where: func(o explore.Outcome) bool { return len(o.Plan.Zones) > 0 }},
	// Removing every move removes stale views of them too: the entry is
	// what instant news of the moves removes as well, and topology's is
	// what it does not.
	{name: "stale-topology", variant: "original", fix: "fresh-views", kind: model.MutualExclusion, only: true, cause: "pinned-topology & fresh-views"},
	{name: "data-under-lock-name", variant: "original", fix: "reserved-name", kind: model.DataLoss},
	{name: "over-strict-quorum", variant: "original", fix: "quorum", kind: model.Liveness, only: true,
		where: func(o explore.Outcome) bool { return o.Config.Replication >= 4 }},
	// The literal clear removes data its host wrote: an owner per
	// acquisition removes it too (Within identity).
	{name: "literal-clear", variant: "original-literal", fix: "evident-reading", kind: model.DataLoss, only: true, cause: "evident-reading & identity"},
	// A version reused needs the post's expiry (scavenges remove by
	// version): the clock fix, node-side expiry, removes it too (Within
	// clock). Searched where versions restart and no time zone breaks the
	// post's expiry first.
	{name: "reused-version", variant: "original", fix: "unique-versions", kind: model.MutualExclusion, only: true,
		cause: "clock & unique-versions", world: restartingVersionsWithoutZones},
	// With every fix but the broad one, the original's acquire still
	// starves contenders now and then; corrected's acquire removes it.
	{name: "contention", variant: "original", fix: "contention", kind: model.Liveness, only: true},
}

// shows reports whether run o of target tg shows e: it fails (or, beyond
// an assumption, shows it broken), every violation that counts is removed
// by e's fix alone and by no other, and where accepts it.
func (e entry) shows(t testing.TB, tg explore.Target, o explore.Outcome) bool {
	if !o.Failed() && (e.beyond == "" || !o.Expected()) {
		return false
	}
	if _, ok := o.Verdict.First(e.kind); !ok {
		return false
	}
	if e.where != nil && !e.where(o) {
		return false
	}
	// A world fix that changes nothing in this seed cannot be its cause:
	// no replays needed to say so.
	for _, f := range tg.Variant.Fixes {
		if f.Name == e.fix && f.World != "" {
			if _, _, _, changed, err := envelope.ChangeWorld(f.World, o.Config, o.Plan, tg.Variant); err != nil || !changed {
				return false
			}
		}
	}
	a, err := Attribute(tg, o, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.cause != "" {
		return !slices.ContainsFunc(a.Kinds, func(k Kind) bool { return k.Cause() != e.cause })
	}
	return a.PureFor(e.fix)
}

// firstPure is the first seed from 1, within n, whose run shows e.
func (e entry) firstPure(t testing.TB, n int) (explore.Outcome, bool) {
	tg := e.target(t)
	opt := explore.DefaultOptions()
	opt.Keep = true
	for seed := uint64(1); seed <= uint64(n); seed++ {
		o, err := explore.RunSeed(tg, seed, opt)
		if err != nil {
			t.Fatal(err)
		}
		if e.shows(t, tg, o) {
			return o, true
		}
	}
	return explore.Outcome{}, false
}

// TestRegenerateBugRepros re-finds every entry at its first pure seed,
// minimises the run while it stays pure for the entry's fix (and shows
// the entry's kind), and writes its repro file. Run with -update-bugs
// (and -bug NAME for one); then check that reports/BUGS.md still tells the
// truth, and record the first seeds in firstPureSeeds.
func TestRegenerateBugRepros(t *testing.T) {
	if !*updateBugs {
		t.Skip("run with -update-bugs to rewrite reports/bugs")
	}
	for _, e := range entries {
		if *onlyBug != "" && e.name != *onlyBug {
			continue
		}
		tg := e.target(t)
		found, ok := e.firstPure(t, 10_000)
		if !ok {
			t.Errorf("%s: no pure seed in 10,000 of its sweep", e.name)
			continue
		}
		keep := func(o explore.Outcome) bool { return e.shows(t, tg, o) }
		m, err := explore.MinimizeWhile(tg, found.Seed, found.Plan, e.kind, keep, 600)
		if err != nil {
			t.Fatal(err)
		}
		r := explore.NewRepro(m.Target, m.Outcome)
		r.Minimized = true
		data, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := explore.WriteFileAtomic(filepath.Join(bugsDir, e.name+".json"), data); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Outcome.Verdict.First(e.kind)
		t.Logf("%s: first pure seed %d (%s), plan size %d -> %d in %d runs: %s", e.name, found.Seed,
			explore.ReplayCommand(tg, found.Seed), m.SizeBefore, m.SizeAfter, m.Runs, v.Story)
	}
}

// firstPureSeeds are where each entry first shows alone in its sweep from
// seed 1 (reports/BUGS.md's table quotes them; TestRegenerateBugRepros
// logs them).
var firstPureSeeds = map[string]uint64{
	"host-identity": 5, "clock-skew": 182, "clock-jump": 245, "no-validity": 295, "quorum-replication-1": 14,
	"topology": 505, "amnesia": 40, "partial-locks": 3563, "empty-topology": 88, "local-time": 10,
	"stale-topology": 768, "data-under-lock-name": 2, "over-strict-quorum": 15, "literal-clear": 2,
	"contention": 59, "reused-version": 14,
}

// Each entry's recorded first seed shows it alone, and so does its repro
// file: attribution, not a pattern, says so. With -long, no earlier seed
// of its sweep shows it.
func TestBugEntriesArePure(t *testing.T) {
	for _, e := range entries {
		t.Run(e.name, func(t *testing.T) {
			if e.pending != "" {
				t.Skipf("%s: %s", e.name, e.pending)
			}
			tg := e.target(t)
			seed, ok := firstPureSeeds[e.name]
			if !ok {
				t.Fatalf("no first seed recorded for %s", e.name)
			}
			if *long {
				o, found := e.firstPure(t, int(seed))
				if !found || o.Seed != seed {
					t.Errorf("%s first shows alone at seed %d, recorded %d", e.name, o.Seed, seed)
				}
			} else {
				opt := explore.DefaultOptions()
				opt.Keep = true
				o, err := explore.RunSeed(tg, seed, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !e.shows(t, tg, o) {
					t.Errorf("seed %d of %s does not show %s alone", seed, explore.ReplayCommand(tg, seed), e.name)
				}
			}
			r, err := explore.ReadRepro(filepath.Join(bugsDir, e.name+".json"), variants.Lookup)
			if err != nil {
				t.Fatal(err)
			}
			opt := explore.DefaultOptions()
			opt.Keep = true
			o, err := explore.Replay(r, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !e.shows(t, r.Target(), o) {
				t.Errorf("reports/bugs/%s.json does not show its entry alone: %s", e.name, o)
			}
		})
	}
}
