package envelope

import (
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// The misuse's world changes take out one misuse each, and change nothing
// in a plan without it (as the kernel's plans are).
func TestMisuseWorldChanges(t *testing.T) {
	u := faults.Use{LatePPM: 1000, LateBy: 1, ShortDeadlinePPM: 2000, Deadline: 2, RefreshPPM: 3000}
	cfg := sim.DefaultConfig()
	_, p, _, changed, err := ChangeWorld(algorithm.NoLateHolders, cfg, faults.Plan{Use: u}, algorithm.Variant{})
	if err != nil || !changed || p.Use.LatePPM != 0 || p.Use.LateBy != 0 || p.Use.ShortDeadlinePPM != 2000 {
		t.Fatalf("no-late-holders: %+v changed=%v err=%v", p.Use, changed, err)
	}
	_, p, _, changed, err = ChangeWorld(algorithm.NoShortDeadlines, cfg, faults.Plan{Use: u}, algorithm.Variant{})
	if err != nil || !changed || p.Use.ShortDeadlinePPM != 0 || p.Use.Deadline != 0 || p.Use.LatePPM != 1000 {
		t.Fatalf("no-short-deadlines: %+v changed=%v err=%v", p.Use, changed, err)
	}
	_, p, _, changed, err = ChangeWorld(algorithm.NoStrayRefresh, cfg, faults.Plan{Use: u}, algorithm.Variant{})
	if err != nil || !changed || p.Use.RefreshPPM != 0 || p.Use.LatePPM != 1000 {
		t.Fatalf("no-stray-refresh: %+v changed=%v err=%v", p.Use, changed, err)
	}
	for _, c := range []algorithm.WorldChange{algorithm.NoLateHolders, algorithm.NoShortDeadlines, algorithm.NoStrayRefresh} {
		if _, _, _, changed, err := ChangeWorld(c, cfg, faults.Plan{}, algorithm.Variant{}); err != nil || changed {
			t.Fatalf("%s changed a plan without misuse (err %v)", c, err)
		}
	}
}
