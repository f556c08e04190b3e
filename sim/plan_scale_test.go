package sim

import (
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/internal/cputime"
)

// Processing a plan is n log n in its events, not quadratic: a run of a
// plan four times as long takes about four times as long, for every kind
// of timed fault (a quadratic step would take sixteen). Each fault is
// short, so the run itself is the plan's.
func TestPlanProcessingScales(t *testing.T) {
	if raceEnabled {
		t.Skip("timing under the race detector says nothing")
	}
	c := DefaultConfig()
	for _, kind := range []faults.Kind{faults.Pause, faults.Crash, faults.Clog, faults.Partition, faults.ClockJump, faults.Topology} {
		small, large := planRunTime(t, c, kind, 10_000), planRunTime(t, c, kind, 40_000)
		if ratio := float64(large) / float64(small); ratio > 9 {
			t.Errorf("%s: 10,000 events take %v, 40,000 take %v: %.1f times as long, not about 4", kind, small, large, ratio)
		}
	}
}

// planRunTime is the shortest of five runs of a plan of n events of kind,
// spread over the run, in the process's CPU time (wall time moved with
// whatever else the shared machine ran: go test runs packages in parallel).
func planRunTime(t *testing.T, c Config, kind faults.Kind, n int) time.Duration {
	p := faults.Plan{Events: make([]faults.Event, n)}
	for i := range p.Events {
		e := faults.Event{At: c.Duration / time.Duration(n) * time.Duration(i), Kind: kind, For: time.Millisecond}
		switch kind {
		case faults.Crash, faults.Clog:
			e.Node = i % c.Nodes
		case faults.Partition:
			e.Nodes = []int{i % c.Nodes}
		case faults.ClockJump:
			e.Target, e.Index, e.Delta, e.For = faults.NodeProcess, i%c.Nodes, time.Microsecond, 0
		case faults.Pause:
			e.Client = i % (c.Hosts * c.ThreadsPerHost)
		case faults.Topology:
			e.Nodes = []int{0, 1, 2}
		}
		p.Events[i] = e
	}
	best := time.Duration(1 << 62)
	for range 5 {
		start := cputime.Start()
		if _, err := Run(Scenario{Config: c, Variant: ttlVariant, Seed: 1, Plan: p}); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Duration(start.Seconds()*1e9))
	}
	return best
}
