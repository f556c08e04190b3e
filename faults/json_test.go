package faults

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// fataler is what both *testing.T and *rapid.T offer.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// roundTrip fails t unless p survives Encode then Decode unchanged.
func roundTrip(t fataler, p Plan) {
	t.Helper()
	data, err := Encode(p)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	q, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode(%s): %v", data, err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip changed the plan:\n%+v\n%+v\n%s", p, q, data)
	}
}

func TestJSONRoundTripsGeneratedPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roundTrip(t, PlanGen([]Class{ClassAll}, defaultShape).Draw(t, "plan"))
	})
}

func TestJSONRoundTripsHandWrittenPlan(t *testing.T) {
	roundTrip(t, goodPlan())
	roundTrip(t, Plan{})
}

func TestDecodeIsStrict(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"unknown top field", `{"network":{},"lossppm":1}`, `unknown field "lossppm"`},
		{"unknown nested field", `{"events":[{"at":0,"kind":"crash","nod":1}]}`, `unknown field "nod"`},
		{"trailing data", `{} {}`, "after the plan"},
		{"trailing garbage", `{}x`, "after the plan"},
		{"not json", `{`, "plan:"},
		{"negative ppm", `{"network":{"loss_ppm":-1}}`, "loss_ppm"},
	}
	for _, tc := range cases {
		_, err := Decode([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Decode(%s) = %v, want error containing %q", tc.name, tc.in, err, tc.want)
		}
	}
}

func TestDecodeNormalisesEmptyLists(t *testing.T) {
	p, err := Decode([]byte(`{"clocks":[],"events":[{"at":0,"kind":"topology","nodes":[1],"hosts":[]}]}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Clocks != nil || p.Events[0].Hosts != nil {
		t.Errorf("empty lists decoded non-nil: %+v", p)
	}
	roundTrip(t, p)
}

// TestPlanStrictWhenEmbedded: a plan inside another document (a repro
// file) is decoded strictly too.
func TestPlanStrictWhenEmbedded(t *testing.T) {
	var repro struct{ Plan Plan }
	err := jsonUnmarshal(`{"Plan":{"network":{"los_ppm":5}}}`, &repro)
	if err == nil || !strings.Contains(err.Error(), "los_ppm") {
		t.Errorf("embedded plan with a typo: %v", err)
	}
	if err := jsonUnmarshal(`{"Plan":null}`, &repro); err != nil {
		t.Errorf("null plan: %v", err)
	}
}
