package faults

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// recorder is a rapid.TB that records a failure instead of failing the
// test, so a test can look at what rapid shrank to.
type recorder struct {
	*testing.T
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Error(...any)          { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }
func (r *recorder) Fail()                 { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true }
func (r *recorder) Failed() bool          { return r.failed }
func (r *recorder) Logf(string, ...any)   {}
func (r *recorder) Log(...any)            {}

// TestPlanGenShrinks: a property broken only by a pause longer than the
// TTL shrinks to a single such pause, of client 0 at time zero, with every
// other fault gone.
func TestPlanGenShrinks(t *testing.T) {
	t.Chdir(t.TempDir()) // rapid writes a fail file under ./testdata
	gen := PlanGen([]Class{ClassLoss, ClassCrash, ClassPause, ClassSkew}, defaultShape)
	var last Plan
	r := &recorder{T: t}
	rapid.Check(r, func(t *rapid.T) {
		last = gen.Draw(t, "plan")
		for _, e := range last.Events {
			if e.Kind == Pause && e.For > time.Minute {
				t.Fatalf("pause outlasts the TTL")
			}
		}
	})
	if !r.failed {
		t.Fatal("rapid found no long pause")
	}
	// rapid reliably deletes everything else and zeroes every other field;
	// it does not always bisect For down to the boundary (it may stop at
	// the range's top), so For is only required to still break the property.
	got := last
	if len(got.Events) == 1 && got.Events[0].For > time.Minute {
		got.Events[0].For = 0
	}
	want := Plan{Events: []Event{{Kind: Pause}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shrunk to %+v, want %+v", last, want)
	}
}
