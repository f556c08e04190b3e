package sweep_test

import (
	"math"
	"strings"
	"testing"

	"github.com/locksim/locksim/sim/sweep"
)

// A selection of seeds has one at least, and its last seed is a seed.
func TestCheckSeeds(t *testing.T) {
	for _, c := range []struct {
		from  uint64
		count int
		ok    bool
	}{
		{1, 1, true}, {1, 0, false}, {1, -1, false}, {math.MaxUint64, 1, true}, {math.MaxUint64, 2, false},
		{math.MaxUint64 - 9, 10, true}, {math.MaxUint64 - 9, 11, false}, {0, sweep.Forever, true},
		{math.MaxUint64, sweep.Forever, false},
	} {
		if err := sweep.CheckSeeds(c.from, c.count); (err == nil) != c.ok {
			t.Errorf("CheckSeeds(%d, %d): %v", c.from, c.count, err)
		}
	}
}

// DecodeShards refuses what is not a sweep report, null and lists
// included.
func TestDecodeShardsRefusesWhatIsNotAReport(t *testing.T) {
	for _, in := range []string{"null", "[]", "3", `{"runs": 1} null`} {
		if _, err := sweep.DecodeShards("in", strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
			t.Errorf("DecodeShards(%q): %v", in, err)
		}
	}
}
