package minimize_test

import (
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/internal/enginetest"
	"github.com/locksim/locksim/sim/minimize"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// Minimize keeps the violation and never grows the plan; a skew failure
// (the post's shared clock broken on purpose) shrinks to a single clock
// setting.
func TestMinimizeShrinksToTheCause(t *testing.T) {
	tg := shortTarget("original", faults.ClassSkew)
	tg.Beyond = []algorithm.Assumption{algorithm.ClockError}
	res, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 40, Run: seedrun.Options{Check: model.DefaultCheckOptions(), Strict: true}})
	if err != nil || len(res.Failures) == 0 {
		t.Fatalf("no skew failure to minimise (err %v)", err)
	}
	f := res.Failures[0]
	m, err := minimize.Minimize(tg, f.Seed, f.Plan, model.MutualExclusion, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Outcome.Verdict.First(model.MutualExclusion); !ok {
		t.Fatal("minimised run lost the violation")
	}
	if m.SizeAfter > m.SizeBefore || m.SizeAfter != 1 || len(m.Outcome.Plan.Clocks) != 1 {
		t.Fatalf("plan size %d -> %d, clocks %v: want one clock setting", m.SizeBefore, m.SizeAfter, m.Outcome.Plan.Clocks)
	}
	if _, err := minimize.Minimize(shortTarget("original"), 1, faults.Plan{}, model.MutualExclusion, 0); err == nil {
		t.Fatal("minimising a passing run should be an error")
	}
}

var shortTarget = enginetest.ShortTarget
