package seedrun_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/internal/enginetest"
	"github.com/locksim/locksim/sim/seedrun"
)

func TestReplayCommandCarriesNonDefaultConfig(t *testing.T) {
	tg := shortTarget("original", faults.ClassCrash, faults.ClassSkew)
	tg.Config.Replication = 1
	got := seedrun.ReplayCommand(tg, 42)
	for _, want := range []string{"go run ./cmd/locksim replay", "-variant original", "-seed 42", "-faults crash,skew", "-replication 1", "-duration 2m0s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

var shortTarget = enginetest.ShortTarget
