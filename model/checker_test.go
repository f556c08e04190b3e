package model

import (
	"reflect"
	"testing"

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
