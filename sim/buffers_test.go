package sim

import (
	"reflect"
	"testing"

	"github.com/locksim/locksim/faults"
)

// Reusing Buffers changes what a run allocates, never what it does: runs
// through one Buffers, in any order, match fresh runs event for event.
func TestBuffersDoNotChangeRuns(t *testing.T) {
	c := smallConfig()
	shape := shapeOf(c)
	var b Buffers
	for _, seed := range []uint64{3, 1, 7, 1, 12} {
		plan := faults.Swarm(seed, []faults.Class{faults.ClassAll}, shape)
		fresh, err := Run(Scenario{Config: c, Variant: naive, Seed: seed, Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		reused, err := Run(Scenario{Config: c, Variant: naive, Seed: seed, Plan: plan, Buffers: &b})
		if err != nil {
			t.Fatal(err)
		}
		if fresh.TraceHash != reused.TraceHash || fresh.Events != reused.Events ||
			!reflect.DeepEqual(fresh.History, reused.History) {
			t.Fatalf("seed %d: a run with reused buffers differs from a fresh one (hash %x vs %x)", seed, reused.TraceHash, fresh.TraceHash)
		}
	}
}
