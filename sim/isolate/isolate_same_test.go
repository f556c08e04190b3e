package isolate_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/compare"
	"github.com/locksim/locksim/sim/exhaust"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/seedrun"
)

// A comparison in worker processes is the comparison in this process, to
// the last float of its metrics (which come back from the workers) and
// the size of every minimised plan (whose candidates ran there), with the
// costs and the systematic exploration.
func TestIsolatedCompareMatchesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	opts := compare.CompareOptions{
		Variants: variantList("original", "corrected", "fenced"),
		Classes:  []faults.Class{faults.ClassNone, faults.ClassSkew, faults.ClassPause},
		Seeds:    6, CostSeeds: 4, Exhaust: 1,
		Config: withDuration(sim.DefaultConfig(), 2*time.Minute), Minimize: true,
	}
	var here, there []compare.CellResult
	opts.OnCell = func(r compare.CellResult) { here = append(here, r) }
	a, err := compare.Compare(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.OnCell = func(r compare.CellResult) { there = append(there, r) }
	opts.Isolate = &isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name())}
	b, err := compare.Compare(opts)
	if err != nil {
		t.Fatal(err)
	}
	if isolate.IsWorker() {
		return
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("in process:\n%+v\nisolated:\n%+v", a, b)
	}
	for i := range here {
		x, y := here[i].First, there[i].First
		if (x == nil) != (y == nil) || x != nil && (x.Seed != y.Seed || x.Hash != y.Hash || len(x.History.Events) != len(y.History.Events)) {
			t.Fatalf("cell %d: the first failure differs: %+v, isolated %+v", i, x, y)
		}
	}
}

// An exploration in worker processes counts what it counts in this
// process, level by level, and finds the same counterexample.
func TestIsolatedExhaustMatchesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	for _, name := range []string{"original", "corrected"} {
		t.Run(name, func(t *testing.T) {
			tg := seedrun.Target{Variant: variant(name), Config: exhaust.SmallWorld(3, 2, 1)}
			o := exhaust.ExhaustOptions{MaxFaults: 1, KeepGoing: true}
			a, err := exhaust.Exhaust(tg, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Isolate = &isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name())}
			b, err := exhaust.Exhaust(tg, o)
			if err != nil {
				t.Fatal(err)
			}
			if isolate.IsWorker() {
				return
			}
			if !reflect.DeepEqual(a.Levels, b.Levels) || a.Complete != b.Complete {
				t.Fatalf("levels %+v in process, %+v isolated", a.Levels, b.Levels)
			}
			if (a.Counterexample == nil) != (b.Counterexample == nil) ||
				a.Counterexample != nil && (a.Counterexample.Hash != b.Counterexample.Hash || a.Counterexample.Schedule.String() != b.Counterexample.Schedule.String()) {
				t.Fatalf("counterexample %v in process, %v isolated", a.Counterexample, b.Counterexample)
			}
			t.Logf("%s", b)
		})
	}
}
