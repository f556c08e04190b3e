package model

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// A Checker's memory must not show: one Checker judging histories in turn
// gives the verdicts Check gives, and a verdict is not changed by the
// Checker's next call (nothing in it points into the Checker's memory).
func TestPropertyCheckerReuseIsInvisible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// A 1 ns liveness bound makes every no-holder window a finding, so
		// verdicts carry windows' Clients.
		opts := CheckOptions{LivenessBoundNS: 1}
		var c Checker
		var histories []History
		var verdicts []Verdict
		for i := range rapid.IntRange(1, 4).Draw(t, "histories") {
			h := genMutexHistory(t)
			if rapid.Bool().Draw(t, "counter") {
				h = genCounterHistory(t)
			}
			v := withoutStuckAccess(c.Check(h, opts))
			if want := withoutStuckAccess(Check(h, opts)); !reflect.DeepEqual(v, want) {
				t.Fatalf("history %d: Checker says\n%+v\nCheck says\n%+v", i, v, want)
			}
			histories, verdicts = append(histories, h), append(verdicts, v)
		}
		for i, h := range histories {
			if want := withoutStuckAccess(Check(h, opts)); !reflect.DeepEqual(verdicts[i], want) {
				t.Fatalf("history %d's verdict changed after later checks:\n%+v\nwant\n%+v", i, verdicts[i], want)
			}
		}
	})
}

// withoutStuckAccess blanks what stuckAccess chose in v: which access it
// names depends on the order porcupine lists equally long partial
// linearizations in, which is map order, so two checks of one history may
// name different accesses.
func withoutStuckAccess(v Verdict) Verdict {
	v.Violations = slices.Clone(v.Violations)
	for i, x := range v.Violations {
		if strings.HasPrefix(x.Story, "the counter's accesses do not linearize") {
			v.Violations[i] = Violation{Kind: x.Kind}
		}
	}
	return v
}

// checkCounter skips porcupine when two increments by one read the same
// value and every operation is such an increment or a read: porcupine must
// reject every such history. (The verdict is then the pair's story either
// way; TestPropertyCounterReferenceAgreesWithPorcupine checks the rest.)
func TestPropertyCounterShortcutOnlyWherePorcupineRejects(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genCounterHistory(t)
		ops := counterOpsInto(nil, h)
		if _, collided := new(Checker).collidedIncrements(h, ops); !collided || !onlyIncrementsAndReads(ops) {
			return
		}
		if model, ops := CounterOperations(h); porcupine.CheckOperations(model, ops) {
			t.Fatalf("porcupine linearizes %v", ops)
		}
	})
}
