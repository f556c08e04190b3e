package cause

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

var long = flag.Bool("long", false, "attribute the first 10,000 default seeds")

func variant(t testing.TB, name string) algorithm.Variant {
	v, err := variants.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// attributeSweep runs seeds [1, n] of tg and attributes each failing one
// (AttributeAll), in seed order.
func attributeSweep(t testing.TB, tg explore.Target, n int) []Attribution {
	var fails []explore.Outcome
	_, err := explore.Sweep(tg, explore.SweepOptions{From: 1, Count: n, KeepGoing: true, Run: explore.DefaultOptions(),
		OnOutcome: func(o explore.Outcome) {
			if o.Failed() {
				fails = append(fails, o)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	as, err := AttributeAll(tg, fails, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// A sweep of the original with every fix but one finds that bug, and
// attribution names it as a cause of every safety violation it finds: the
// fix left out removes each (alone, or with others when several bugs did
// it). Liveness is not asserted here: with every fix the family knows,
// the original's acquire still starves contenders now and then (it gives
// up at the first item it meets), which the broad fix "contention"
// (corrected's acquire) removes in most such seeds and not in all;
// TestEveryBugIsCatalogued -long reports those.
func TestOnlyShowsItsBug(t *testing.T) {
	for _, name := range []string{"quorum", "identity", "partial", "reserved-name"} {
		t.Run(name, func(t *testing.T) {
			tg, err := Only(explore.DefaultTarget(variant(t, "original")), name)
			if err != nil {
				t.Fatal(err)
			}
			as := attributeSweep(t, tg, 150)
			if len(as) == 0 {
				t.Fatalf("every fix but %s: no failing seed in 150", name)
			}
			for _, a := range as {
				for _, k := range a.Kinds {
					if k.Kind.IsLiveness() {
						continue
					}
					if !slices.ContainsFunc(k.Cures, func(c []string) bool { return slices.Contains(c, name) }) {
						t.Errorf("every fix but %s, seed %d: %s", name, a.Seed, a)
					}
				}
			}
			t.Logf("every fix but %s: %d failing seeds of 150, first %d", name, len(as), as[0].Seed)
		})
	}
}

// Only refuses a fix the variant does not know.
func TestOnlyUnknownFix(t *testing.T) {
	if _, err := Only(explore.DefaultTarget(variant(t, "original")), "nonesuch"); err == nil {
		t.Fatal("Only accepted a fix original does not know")
	}
}

// A lock without declared fixes is attributed by world changes: a lock
// that trusts a lone node is broken only when that node crashes.
func TestAttributionByWorld(t *testing.T) {
	v := variant(t, "original")
	v.Fixes, v.WithFixes = nil, nil
	tg := explore.DefaultTarget(v)
	as := attributeSweep(t, tg, 20)
	if len(as) == 0 {
		t.Fatal("no failing seed of the original in 20")
	}
	attributed := 0
	for _, a := range as {
		if !a.ByWorld {
			t.Fatalf("seed %d attributed by fixes the variant does not declare", a.Seed)
		}
		if a.Attributed() {
			attributed++
		}
		for _, k := range a.Kinds {
			for _, c := range k.Cures {
				for _, n := range c {
					if !slices.Contains(envelope.EveryWorldChange, algorithm.WorldChange(n)) {
						t.Errorf("seed %d: cure %q is no world change", a.Seed, n)
					}
				}
			}
		}
	}
	if attributed == 0 {
		t.Errorf("no failing seed of %d attributed by world changes", len(as))
	}
}

// Every failing seed of the default sweeps of the original and its
// literal reading is attributed: some fix its family knows, or a set of
// them, removes each violation (-long: the first 10,000 seeds; else 60).
// The groups, with their first pure seeds, are what reports/BUGS.md
// lists; with -v the test prints them.
func TestEveryBugIsCatalogued(t *testing.T) {
	n := 60
	if *long {
		n = 10_000
	}
	for _, name := range []string{"original", "original-literal"} {
		tg := explore.DefaultTarget(variant(t, name))
		start := time.Now()
		as := attributeSweep(t, tg, n)
		replays := 0
		for _, a := range as {
			replays += a.Replays
			if !a.Attributed() {
				t.Errorf("%s seed %d: %s\n  replay: %s", name, a.Seed, a, explore.ReplayCommand(tg, a.Seed))
			}
		}
		for _, g := range Groups(as) {
			t.Logf("%s: %-18s %-50s %5d seeds, first %d, first pure %d", name, g.Kind, g.Cause, len(g.Seeds), g.Seeds[0], g.Pure)
		}
		if len(as) > 0 {
			t.Logf("%s: %d of %d seeds fail; %.1f replays per failing seed; %s for all", name, len(as), n,
				float64(replays)/float64(len(as)), time.Since(start).Round(time.Second))
		}
	}
}

func ExampleAttribution_String() {
	a := Attribution{Kinds: []Kind{{Kind: "mutual-exclusion", Cures: [][]string{{"quorum"}}}}, Replays: 11}
	fmt.Println(a)
	// Output: mutual-exclusion: quorum (that fix alone removes it, and no other fix does) [11 replays]
}
