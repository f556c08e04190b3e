package explore

import (
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/minimize"
)

// MinimizeResult is minimize.MinimizeResult.
type MinimizeResult = minimize.MinimizeResult

// MinimizeOptions is minimize.MinimizeOptions.
type MinimizeOptions = minimize.MinimizeOptions

// Minimize is minimize.Minimize.
func Minimize(t Target, seed uint64, plan faults.Plan, kind model.ViolationKind, maxRuns int) (MinimizeResult, error) {
	return minimize.Minimize(t, seed, plan, kind, maxRuns)
}

// MinimizeWhile is minimize.MinimizeWhile.
func MinimizeWhile(t Target, seed uint64, plan faults.Plan, kind model.ViolationKind, keep func(Outcome) bool, maxRuns int) (MinimizeResult, error) {
	return minimize.MinimizeWhile(t, seed, plan, kind, keep, maxRuns)
}

// MinimizeWith is minimize.MinimizeWith.
func MinimizeWith(t Target, seed uint64, plan faults.Plan, kind model.ViolationKind, o MinimizeOptions) (MinimizeResult, error) {
	return minimize.MinimizeWith(t, seed, plan, kind, o)
}
