package etcdv3

import (
	"flag"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/realredis"
)

var determinismSeeds = flag.Int("determinism-seeds", 40, "seeds TestMutexIsDeterministic runs twice each")

// etcd's Mutex and Session, with their keep-alive and watch goroutines
// and timers, under every fault class: each seed is the same run twice,
// to the event (realredis.CheckDeterminism names the first difference).
func TestMutexIsDeterministic(t *testing.T) {
	lock := mutexLock()
	target := explore.Target{Variant: lock.Variant(), Config: realredis.EtcdDefaultConfig(), Classes: []faults.Class{faults.ClassAll},
		Runner: realredis.Runner{T: t, Lock: lock}}
	n := *determinismSeeds
	if testing.Short() {
		n = min(n, 10)
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		sc := realredis.Scenario{Config: target.At(seed).Config, Lock: lock, Seed: seed, Plan: target.PlanFor(seed)}
		if _, err := realredis.CheckDeterminism(t, sc); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	t.Logf("%d seeds, each the same run twice", n)
}
