package locksimtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/explore"
)

// leaseLock is a lock of your own, written from scratch against package
// algorithm, in blocking style: put an item with a node-side TTL on each
// of the key's nodes, hold the lock if a majority took it, and delete your
// items when you release it (or fail).
type leaseLock struct{}

// leaseTTL is how long a node keeps an item: the lease.
const leaseTTL = 10 * time.Second

func (leaseLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	start := env.Now()
	// An owner per acquisition: two threads of one host are two owners.
	owner := fmt.Sprintf("%s/%x", env.ClientName(), env.Rand().Uint64())
	nodes := env.Topology(key)
	took := 0
	for _, s := range nodes {
		if _, err := s.SetIfAbsentTTL(key, owner, leaseTTL); err == nil {
			took++
		}
	}
	if took <= len(nodes)/2 {
		for _, s := range nodes {
			_ = s.CompareAndDelete(key, owner)
		}
		return algorithm.Grant{}
	}
	// The mistake a reviewer should catch: the holder believes the whole
	// lease, from before its first write, on its own clock, while each node
	// runs the TTL on its clock; with no margin for clocks that run at
	// different rates, a node can free the key while a holder that keeps
	// the lock to the end of its lease (a pause) still believes. (locksim
	// attributes seed 5 to pauses & clock errors: the world needs both.)
	return algorithm.Grant{Granted: true, Owner: owner, ValidUntil: start + leaseTTL}
}

func (leaseLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	for _, s := range env.Topology(key) {
		_ = s.CompareAndDelete(key, g.Owner)
	}
}

// leaseVariant is what locksim needs of the lock: a name, a constructor,
// and its envelope, what it promises and what it assumes of the world.
// Seeds are drawn inside the envelope, up to its edges: here clocks whose
// rates differ by up to 1%, holders that use the lock only within the
// validity they were given, and nodes that keep their items across restarts.
func leaseVariant() algorithm.Variant {
	return algorithm.Variant{
		Name:    "lease",
		Summary: "a majority of node-side leases, believed for the whole TTL",
		New:     func() algorithm.Lock { return leaseLock{} },
		Envelope: algorithm.Envelope{
			Promises: algorithm.MutualExclusion | algorithm.ResourceSafety,
			Safety: algorithm.Assumptions{
				ClockRateDiffMaxPPM: 10_000, NoClockJumps: true, UseWithinValidity: true,
				DurableNodes: true, FixedTopologyWhileHeld: true, ReservedLockNames: true,
			},
		},
	}
}

// In a test file of your module: Check sweeps the lock on every core and,
// for this one, fails the test where a node's clock runs fast enough to
// free the key while the holder still believes (TestExampleLockIsBroken
// holds it), with the world, the timeline, a repro file kept under
// testdata/locksim/TestLeaseLock/ and the command that replays it.
func ExampleCheck() {
	var t *testing.T // func TestLeaseLock(t *testing.T) {
	locksimtest.Check(t, leaseVariant(), locksimtest.Faults("all"), locksimtest.Seeds(2000))
	// }
}

// In a test file of your module: Explore runs every schedule of a small
// world with at most two faults inside the lock's envelope, and fails the
// test with the counterexample that has the fewest faults there are, or
// logs the bounded result.
func ExampleExplore() {
	var t *testing.T // func TestLeaseLockExhaustively(t *testing.T) {
	locksimtest.Explore(t, leaseVariant(), 2)
	// }
}

// The package example's lock is broken as its doc says: the default
// sweep finds two holders inside its envelope.
func TestExampleLockIsBroken(t *testing.T) {
	res, err := explore.Sweep(explore.DefaultTarget(leaseVariant()), explore.SweepOptions{From: 1, Count: locksimtest.DefaultSeeds})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed == 0 || res.Failures[0].Findings[0].Kind != model.MutualExclusion {
		t.Fatalf("the example's lock shows no two holders in %d seeds: %+v", locksimtest.DefaultSeeds, res.Failures)
	}
	t.Logf("seed %d: %s", res.Failures[0].Seed, res.Failures[0].Findings[0].Story)
}
