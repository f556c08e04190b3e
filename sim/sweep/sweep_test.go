package sweep_test

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// A sweep of 10^12 seeds lists none of them: stopped after a stretch, it
// has held constant memory, says where it stopped, and a sweep resumed
// from there gives what one uninterrupted sweep of the whole stretch gives.
// hugeCount is 10^12 seeds where an int holds it, the most it holds on a
// 32-bit build.
const hugeCount = min(1_000_000_000_000, math.MaxInt)

func TestHugeSweepStreamsAndStops(t *testing.T) {
	tg := seedrun.Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassThreads}}
	tg.Config.Duration = 20 * time.Second
	stop := make(chan struct{})
	seen := 0
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: hugeCount, KeepGoing: true, Parallel: 2, Stop: stop,
		OnOutcome: func(seedrun.Outcome) {
			if seen++; seen == 400 {
				close(stop)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if !res.Interrupted || res.Runs < 400 || res.NextSeed != uint64(res.Runs)+1 {
		t.Fatalf("interrupted %v after %d runs, next seed %d: want interrupted, at least 400 runs, next seed runs+1",
			res.Interrupted, res.Runs, res.NextSeed)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
		t.Errorf("the heap grew %d MiB over %d seeds of a 10^12-seed sweep", grown>>20, res.Runs)
	}
	// Resume from NextSeed for the rest of a stretch 200 seeds past it
	// (600 at least): the two parts together are the uninterrupted
	// stretch. How far past 400 the sweep ran before it saw the stop
	// depends on the machine's load (906 seeds was seen under go test ./...).
	stretch := max(600, res.Runs+200)
	whole, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: stretch, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := sweep.Sweep(tg, sweep.SweepOptions{From: res.NextSeed, Count: stretch - res.Runs, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs+rest.Runs != whole.Runs || res.Events+rest.Events != whole.Events || res.Failed+rest.Failed != whole.Failed {
		t.Errorf("interrupted + resumed = %d runs, %d events, %d failing; whole = %d, %d, %d",
			res.Runs+rest.Runs, res.Events+rest.Events, res.Failed+rest.Failed, whole.Runs, whole.Events, whole.Failed)
	}
}

// Len and SeedAt are the seeds Seeds lists, sharded or not.
func TestSeedArithmetic(t *testing.T) {
	for _, o := range []sweep.SweepOptions{{From: 1, Count: 10}, {From: 5, Count: 42, ShardIndex: 1, ShardCount: 4},
		{From: 1, Count: 3, ShardIndex: 3, ShardCount: 4}, {From: 7, Count: 0}} {
		var want []uint64
		for i := 0; i < o.Count; i++ {
			if o.ShardCount == 0 || i%o.ShardCount == o.ShardIndex {
				want = append(want, o.From+uint64(i))
			}
		}
		if o.Len() != len(want) {
			t.Errorf("%+v: Len %d, want %d", o, o.Len(), len(want))
			continue
		}
		for i, s := range want {
			if o.SeedAt(i) != s {
				t.Errorf("%+v: SeedAt(%d) = %d, want %d", o, i, o.SeedAt(i), s)
			}
		}
		// IndexOf is SeedAt's inverse, and refuses every other seed.
		for seed := o.From - min(o.From, 2); seed < o.From+uint64(o.Count)+2; seed++ {
			i, ok := o.IndexOf(seed)
			wantI := slices.Index(want, seed)
			if ok != (wantI >= 0) || (ok && i != wantI) {
				t.Errorf("%+v: IndexOf(%d) = %d, %v; want %d", o, seed, i, ok, wantI)
			}
		}
	}
}
