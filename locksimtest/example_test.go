package locksimtest_test

import (
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/variants"
)

// optimistic is a lock of your own: here, one that wraps the corrected
// DHT lock and, by mistake, believes it holds the lock even when the
// acquire was denied.
type optimistic struct{ inner algorithm.Lock }

func (l optimistic) Acquire(env algorithm.Env, key string) algorithm.Grant {
	g := l.inner.Acquire(env, key)
	g.Granted = true // the mistake
	return g
}

func (l optimistic) Release(env algorithm.Env, key string, g algorithm.Grant) {
	l.inner.Release(env, key, g)
}

// myLock is the variant: a name, a constructor, and the envelope, what the
// lock promises and assumes of the world (here corrected's).
func myLock() algorithm.Variant {
	base, _ := variants.Lookup("corrected")
	return algorithm.Variant{
		Name:     "optimistic",
		Summary:  "corrected, but granted whatever the acquire said",
		New:      func() algorithm.Lock { return optimistic{base.New()} },
		Envelope: base.Envelope,
	}
}

// In a test file of your module: Check sweeps the lock on every core and,
// here, fails the test at the first seed where two clients hold the lock at
// once, with the timeline, a repro file and the command that replays it.
func ExampleCheck() {
	var t *testing.T // func TestMyLock(t *testing.T) {
	locksimtest.Check(t, myLock(), locksimtest.Faults("all"), locksimtest.Seeds(2000))
	// }
}

// In a test file of your module: Explore runs every schedule of a small
// world with at most two faults; for this lock it fails the test with a
// counterexample that has the fewest faults there are (here none: the
// mistake needs no fault), its schedule, timeline, repro and replay line.
func ExampleExplore() {
	var t *testing.T // func TestMyLockExhaustively(t *testing.T) {
	locksimtest.Explore(t, myLock(), 2)
	// }
}
