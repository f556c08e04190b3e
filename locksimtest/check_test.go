package locksimtest

import (
	"testing"

	"github.com/locksim/locksim/variants"
)

// A clean lock passes Check: corrected inside its envelope.
func TestCheckPassesACleanLock(t *testing.T) {
	v, err := variants.Lookup("corrected")
	if err != nil {
		t.Fatal(err)
	}
	Check(t, v, Seeds(200))
}

// A clean lock passes Explore: corrected has no violation in any schedule
// of the small world with one fault inside its envelope.
func TestExplorePassesACleanLock(t *testing.T) {
	v, err := variants.Lookup("corrected")
	if err != nil {
		t.Fatal(err)
	}
	Explore(t, v, 1)
}
