package seedrun_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
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

// shortTarget is a two-minute run of the registered variant called name.
func shortTarget(name string, classes ...faults.Class) seedrun.Target {
	c := sim.DefaultConfig()
	c.Duration = 2 * time.Minute
	return seedrun.Target{Variant: variant(name), Config: c, Classes: classes}
}
