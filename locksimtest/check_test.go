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
