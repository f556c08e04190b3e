package sweep_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/internal/enginetest"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// A sweep reports the same outcomes in the same (seed) order whatever the
// number of workers.
func TestSweepResultsDoNotDependOnParallelism(t *testing.T) {
	tg := shortTarget("original", faults.ClassAll)
	collect := func(parallel int) []string {
		var got []string
		_, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 24, Parallel: parallel, KeepGoing: true,
			OnOutcome: func(o seedrun.Outcome) {
				got = append(got, utoa(o.Seed)+":"+utoa(o.Hash)+":"+itoa(len(o.Verdict.Violations)))
			}})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	one, four := collect(1), collect(4)
	if len(one) != 24 || !slices.Equal(one, four) {
		t.Fatalf("parallel 1 and 4 differ:\n%v\n%v", one, four)
	}
}

// Stopping at the first violation reports the first failing seed in seed
// order, even when later seeds finish first on other workers.
func TestSweepStopsAtFirstFailingSeed(t *testing.T) {
	tg := shortTarget("original", faults.ClassThreads)
	res, err := sweep.Sweep(tg, sweep.SweepOptions{From: 5, Count: 50, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Seed != 5 || res.Runs != 1 {
		t.Fatalf("want exactly seed 5 failing after 1 run, got runs=%d failures=%d", res.Runs, len(res.Failures))
	}
}

// N shards cover the seed range exactly once, and their merged failures
// equal a single sweep's.
func TestShardsCoverSeedsExactlyOnce(t *testing.T) {
	all := sweep.SweepOptions{From: 100, Count: 37}.Seeds()
	seen := map[uint64]int{}
	for k := 0; k < 4; k++ {
		for _, s := range (sweep.SweepOptions{From: 100, Count: 37, ShardIndex: k, ShardCount: 4}).Seeds() {
			seen[s]++
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("shards cover %d seeds, want %d", len(seen), len(all))
	}
	for _, s := range all {
		if seen[s] != 1 {
			t.Fatalf("seed %d covered %d times", s, seen[s])
		}
	}
	tg := shortTarget("original", faults.ClassPause) // no validity: a bug inside the post's envelope
	single, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 12, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	var merged []uint64
	for k := 0; k < 3; k++ {
		r, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 12, KeepGoing: true, ShardIndex: k, ShardCount: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Failures {
			merged = append(merged, f.Seed)
		}
	}
	slices.Sort(merged)
	var want []uint64
	for _, f := range single.Failures {
		want = append(want, f.Seed)
	}
	if len(want) == 0 || !slices.Equal(merged, want) {
		t.Fatalf("merged shard failures %v, single sweep %v", merged, want)
	}
}

func TestSweepRejectsBadOptions(t *testing.T) {
	tg := shortTarget("original")
	for _, o := range []sweep.SweepOptions{{Count: -1}, {Count: 3, ShardIndex: 3, ShardCount: 3}, {Count: 1, Parallel: -2}} {
		if _, err := sweep.Sweep(tg, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := sweep.Sweep(seedrun.Target{Variant: algorithm.Variant{Name: "nope"}, Config: sim.DefaultConfig()}, sweep.SweepOptions{Count: 1}); err == nil ||
		!strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("a variant without a constructor: want an error naming it, got %v", err)
	}
}

// A keep-going sweep counts every failure but keeps only the first few, so
// its memory does not grow with the number of failing seeds.
func TestSweepKeepsABoundedNumberOfFailures(t *testing.T) {
	tg := shortTarget("original", faults.ClassThreads) // every seed fails
	seen := 0
	res, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 12, KeepGoing: true, KeepFailures: 3,
		OnOutcome: func(o seedrun.Outcome) {
			if o.Failed() {
				seen++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 12 || seen != 12 || len(res.Failures) != 3 || res.Failures[2].Seed != 3 {
		t.Fatalf("failed=%d seen=%d kept=%d: want 12 counted and streamed, the first 3 kept", res.Failed, seen, len(res.Failures))
	}
}

var shortTarget = enginetest.ShortTarget

func utoa(u uint64) string { return strconv.FormatUint(u, 10) }

func itoa(i int) string { return strconv.Itoa(i) }
