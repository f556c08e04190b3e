package schedule

import (
	"testing"

	"github.com/locksim/locksim/sim"
)

// fixedLatency is a seed chooser that never decides a latency: the tests
// see only what PCT decides.
type fixedLatency struct{}

func (fixedLatency) Between(c sim.Choice, lo, hi int64) int64 { return -1 }
func (fixedLatency) Chance(sim.Choice, uint32) bool           { return false }

// PCT delivers the messages of a higher-priority client sooner: the top
// client's at the lowest latency, the bottom's at the highest, evenly
// between; at a change point the client whose message it is drops below
// every other, for good. Other choice points are the seed's.
func TestPCTOrdersDeliveriesByPriority(t *testing.T) {
	c := PCT{Depth: 2, Steps: 3}.Choices(7, 3)(fixedLatency{}).(*pctChooser)
	c.prio, c.changes = []int{2, 1, 0}, []int{3}
	lat := func(client int) int64 {
		return c.Between(sim.Choice{Kind: sim.ChoiceLatency, Client: client, Node: 0}, 100, 300)
	}
	if got := []int64{lat(0), lat(1)}; got[0] != 100 || got[1] != 200 {
		t.Fatalf("latencies of clients 0, 1 by priority: %v, want [100 200]", got)
	}
	if got := lat(0); got != 300 { // the third latency choice: client 0 drops
		t.Fatalf("client 0 at the change point: %d, want 300 (lowest priority)", got)
	}
	if got := []int64{lat(1), lat(2), lat(0)}; got[0] != 100 || got[1] != 200 || got[2] != 300 {
		t.Fatalf("after the change: %v, want [100 200 300]", got)
	}
	if got := c.Between(sim.Choice{Kind: sim.ChoiceThink, Client: 0}, 1, 2); got != -1 {
		t.Fatalf("a think time went to PCT: %d", got)
	}
}
