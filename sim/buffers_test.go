package sim

import (
	"reflect"
	"runtime"
	"testing"
	"time"

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

// The client coroutines a Buffers keeps serve the next run's clients (the
// goroutine count stays put over many runs), and a Buffers dropped takes
// them with it: none is left once the collector has run its cleanup.
func TestBuffersKeepCarriersAndDropThem(t *testing.T) {
	c := smallConfig()
	clients := c.Hosts * c.ThreadsPerHost
	before := runtime.NumGoroutine()
	b := new(Buffers)
	for seed := range uint64(20) {
		if _, err := Run(Scenario{Config: c, Variant: naive, Seed: seed, Buffers: b}); err != nil {
			t.Fatal(err)
		}
	}
	if during := runtime.NumGoroutine(); during > before+clients {
		t.Fatalf("%d goroutines before, %d after 20 runs through one Buffers of %d clients: the carriers are not reused", before, during, clients)
	}
	b = nil
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before, %d after the Buffers was dropped", before, runtime.NumGoroutine())
		}
		runtime.GC()
	}
}
