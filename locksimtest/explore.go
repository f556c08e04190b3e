package locksimtest

import (
	"fmt"
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/explore"
)

// Explore runs every schedule of a small world with at most maxFaults
// faults inside v's envelope (explore.Exhaust): by default
// explore.SmallWorld(3, 2, 1), three nodes holding the key and two
// clients going for one grant each; Config gives another. Breadth-first by
// the number of faults, so when it fails t, the counterexample has the
// fewest faults there are: the verdict, its schedule in words, the
// timeline, a repro kept in testdata/locksim (replayed first by every later run) and
// the -locksim.replay line. With
// none it logs the bounded result. With -short it explores one fault
// fewer. The schedules run in the test's process.
//
//	func TestMyLockExhaustively(t *testing.T) {
//		locksimtest.Explore(t, mylock.Variant(), 2)
//	}
func Explore(t *testing.T, v algorithm.Variant, maxFaults int, opts ...Option) {
	t.Helper()
	s := settings{}
	for _, o := range opts {
		o(&s)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	target := explore.Target{Variant: v, Config: explore.SmallWorld(3, 2, 1)}
	if s.config != nil {
		target.Config = *s.config
	}
	if *replayFlag != "" {
		replay(t, target, *replayFlag, nil)
		return
	}
	k := maxFaults
	if testing.Short() {
		k = max(0, k-1)
	}
	replayKept(t, target, nil)
	res, err := explore.Exhaust(target, explore.ExhaustOptions{MaxFaults: k})
	if err != nil {
		t.Fatalf("locksimtest.Explore: %v", err)
	}
	if res.Counterexample == nil {
		t.Logf("locksim: %s: %s", v.Name, res)
		return
	}
	report(t, res.Target, *res.Counterexample, fmt.Sprintf("a schedule with %d faults, the fewest there are: %s", res.Counterexample.Schedule.Faults(), res.Counterexample.Schedule), "")
}
