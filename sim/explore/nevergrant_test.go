package explore

import (
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
)

// neverGrants is a lock that only calls servers: it reads the lock item
// on every node of the key and denies every acquire.
type neverGrants struct{}

func (neverGrants) Acquire(env algorithm.Env, key string) algorithm.Grant {
	for _, s := range env.Topology(key) {
		_, _ = s.ReadKey(key + "_lock")
	}
	return algorithm.Grant{}
}

func (neverGrants) Release(algorithm.Env, string, algorithm.Grant) {}

// A lock that never grants is starving its waiters in every world that
// leaves it a chance: the liveness judge has no blind spot in the default
// sweep. It once passed 11 of these 20 seeds, because a plan's extra
// latency that could push a round trip past the RPC timeout switched
// liveness off for the whole run.
func TestNeverGrantingLockFailsEverySeed(t *testing.T) {
	v := algorithm.Variant{Name: "never-grants", New: func() algorithm.Lock { return neverGrants{} }}
	tg := DefaultTarget(v, faults.ClassAll)
	for seed := uint64(1); seed <= 20; seed++ {
		o, err := RunSeed(tg, seed, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if !o.Failed() {
			t.Errorf("seed %d: a lock that never grants passed: %s", seed, o)
		}
	}
}
