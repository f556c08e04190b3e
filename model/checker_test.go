package model

import (
	"reflect"
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
			v := c.Check(h, opts)
			if want := Check(h, opts); !reflect.DeepEqual(v, want) {
				t.Fatalf("history %d: Checker says\n%+v\nCheck says\n%+v", i, v, want)
			}
			histories, verdicts = append(histories, h), append(verdicts, v)
		}
		for i, h := range histories {
			if want := Check(h, opts); !reflect.DeepEqual(verdicts[i], want) {
				t.Fatalf("history %d's verdict changed after later checks:\n%+v\nwant\n%+v", i, verdicts[i], want)
			}
		}
	})
}

// The same counter history gets the same verdict on every check, story
// included, although porcupine lists its partial linearizations in map
// order (stuckAccess breaks ties).
func TestPropertyCounterVerdictIsStable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genCounterHistory(t)
		want, _ := CheckCounter(h)
		for range 8 {
			if got, _ := CheckCounter(h); !reflect.DeepEqual(got, want) {
				t.Fatalf("two checks of one history disagree:\n%+v\n%+v", got, want)
			}
		}
	})
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
