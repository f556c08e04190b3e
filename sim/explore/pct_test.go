package explore

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
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
	c := PCT{Depth: 2, Steps: 3}.choices(7, 3)(fixedLatency{}).(*pctChooser)
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

// A seed under PCT is deterministic, runs otherwise than its swarm run,
// and its repro and replay command carry the scheduler.
func TestPCTSeedsReplay(t *testing.T) {
	tg := DefaultTarget(variant("original"), faults.ClassThreads)
	tg.Config.Duration = 3 * 60e9
	pct := tg
	pct.PCT = &PCT{Depth: 3, Steps: DefaultPCTSteps}
	a, err := RunSeed(pct, 5, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunSeed(pct, 5, DefaultOptions())
	swarm, _ := RunSeed(tg, 5, DefaultOptions())
	if a.Hash != b.Hash || a.Hash == swarm.Hash {
		t.Fatalf("hashes: pct %x then %x, swarm %x: want pct twice the same, and not swarm's", a.Hash, b.Hash, swarm.Hash)
	}
	data, err := NewRepro(pct, a).Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeReproFor(data, pct.Variant)
	if err != nil || r.PCT == nil || *r.PCT != *pct.PCT {
		t.Fatalf("the repro's scheduler: %+v, %v", r.PCT, err)
	}
	if o, err := Replay(r, Options{Check: r.CheckOptions()}); err != nil || o.Hash != a.Hash {
		t.Fatalf("replayed to %x (%v), want %x", o.Hash, err, a.Hash)
	}
	if cmd := ReplayCommand(pct, 5); !strings.Contains(cmd, " -pct 3") {
		t.Fatalf("replay command %q does not carry -pct 3", cmd)
	}
	for _, bad := range []PCT{{Depth: 0, Steps: 10}, {Depth: 17, Steps: 100}, {Depth: 5, Steps: 2}} {
		bt := tg
		bt.PCT = &bad
		if err := bt.Validate(); err == nil {
			t.Errorf("PCT %+v was accepted", bad)
		}
	}
}
