package faults

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestPlanGenByClass: rapid plans are valid, sorted, round-trip, and hold
// only their class's faults, in every shape.
func TestPlanGenByClass(t *testing.T) {
	for _, tc := range classFaults {
		for si, s := range testShapes {
			t.Run(fmt.Sprintf("%s/shape%d", tc.class, si), func(t *testing.T) {
				gen := PlanGen([]Class{tc.class}, s)
				seen := map[string]bool{}
				rapid.Check(t, func(rt *rapid.T) {
					p := gen.Draw(rt, "plan")
					checkPlan(rt, p, tc.class, s, "drawn plan")
					for _, f := range p.Faults() {
						seen[f] = true
					}
				})
				for _, f := range tc.faults {
					if !seen[f] {
						t.Errorf("rapid never drew %s", f)
					}
				}
			})
		}
	}
}
