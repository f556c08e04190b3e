package faults

import (
	"encoding/json"
	"reflect"
	"testing"
)

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// FuzzDecode: Decode never panics, and every plan it accepts re-encodes to
// a document that decodes to the same plan. Run: go test -fuzz=FuzzDecode ./faults
func FuzzDecode(f *testing.F) {
	for seed := range uint64(16) {
		data, err := Encode(Swarm(seed, []Class{ClassAll}, defaultShape))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	good, _ := Encode(goodPlan())
	f.Add(good)
	for _, s := range []string{`{}`, `null`, `{"events":[]}`, `{"clocks":[{"kind":"node"}]} x`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Encode(p)
		if err != nil {
			t.Fatalf("Encode of a decoded plan: %v", err)
		}
		q, err := Decode(again)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the plan:\n%+v\n%+v", p, q)
		}
		_ = p.Validate(defaultShape) // must not panic on any decoded plan
		_ = Allow(ClassAll).Check(p)
		_, _ = p.Size(), p.Faults()
	})
}
