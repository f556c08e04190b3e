package envelope

import (
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/variants"
)

// TestWorldDrawCoversItsRanges draws the whole world for many seeds: every
// draw is a valid config, inside the documented ranges, every value of the
// small fields is reached (replication 1..5, even ones included), and the
// same seed always draws the same world.
func TestWorldDrawCoversItsRanges(t *testing.T) {
	tg := edgesOf("original", sim.DefaultConfig(), []faults.Class{faults.ClassAll}, DefaultWorld([]faults.Class{faults.ClassAll}))
	seen := map[string]map[int]bool{"nodes": {}, "replication": {}, "hosts": {}, "threads": {}}
	var longHold, shortTTL, tail, restarting bool
	for seed := uint64(1); seed <= 2000; seed++ {
		c := tg.WorldAt(seed)
		if err := c.Validate(); err != nil {
			t.Fatalf("seed %d drew an invalid world: %v", seed, err)
		}
		if again := tg.WorldAt(seed); again != c {
			t.Fatalf("seed %d drew two worlds: %+v and %+v", seed, c, again)
		}
		switch {
		case c.Nodes < 1 || c.Nodes > 7, c.Replication < 1 || c.Replication > 5,
			c.Hosts < 1 || c.Hosts > 4, c.ThreadsPerHost < 1 || c.ThreadsPerHost > 3:
			t.Fatalf("seed %d: out of range: %+v", seed, c)
		case c.HoldMax >= c.TTL:
			t.Fatalf("seed %d: holds up to %s, not under the TTL %s", seed, c.HoldMax, c.TTL)
		case c.Duration != tg.Config.Duration || c.RPCTimeout != tg.Config.RPCTimeout:
			t.Fatalf("seed %d changed a field the world does not draw: %+v", seed, c)
		}
		seen["nodes"][c.Nodes] = true
		seen["replication"][c.Replication] = true
		seen["hosts"][c.Hosts] = true
		seen["threads"][c.ThreadsPerHost] = true
		longHold = longHold || c.HoldMax > c.TTL/2
		shortTTL = shortTTL || c.TTL < 10*time.Second
		tail = tail || c.LatencyTail > c.RPCTimeout
		restarting = restarting || c.RestartingVersions
	}
	for field, top := range map[string]int{"nodes": 7, "replication": 5, "hosts": 4, "threads": 3} {
		for v := 1; v <= top; v++ {
			if !seen[field][v] {
				t.Errorf("no seed drew %s %d", field, v)
			}
		}
	}
	if !longHold || !shortTTL || !tail || !restarting {
		t.Errorf("a corner was never drawn: hold over half the TTL %v, TTL under 10 s %v, tail past the RPC timeout %v, restarting versions %v",
			longHold, shortTTL, tail, restarting)
	}
}

// TestPinnedFieldsStayPinned: a field not in World keeps the config's value
// in every seed, and the others still vary.
func TestPinnedFieldsStayPinned(t *testing.T) {
	base := sim.DefaultConfig()
	base.Replication, base.Nodes = 4, 6
	world := slices.DeleteFunc(DefaultWorld([]faults.Class{faults.ClassAll}), func(f WorldField) bool { return f == WorldReplication })
	tg := edgesOf("original", base, []faults.Class{faults.ClassAll}, world)
	nodes := map[int]bool{}
	for seed := uint64(1); seed <= 500; seed++ {
		c := tg.WorldAt(seed)
		if c.Replication != 4 {
			t.Fatalf("seed %d: replication %d, pinned at 4", seed, c.Replication)
		}
		if c.Nodes < 4 {
			t.Fatalf("seed %d: %d nodes cannot hold the pinned replication 4", seed, c.Nodes)
		}
		nodes[c.Nodes] = true
	}
	if len(nodes) != 4 { // 4..7
		t.Errorf("nodes drawn: %v, want each of 4..7", nodes)
	}
}

// TestDefaultWorldFollowsTheClasses: each class draws the fields its bugs
// live in, all does everything, none nothing.
func TestDefaultWorldFollowsTheClasses(t *testing.T) {
	cases := map[faults.Class][]WorldField{
		faults.ClassNone:     nil,
		faults.ClassThreads:  {WorldHosts, WorldThreads},
		faults.ClassAmnesia:  {WorldNodes, WorldReplication, WorldHold},
		faults.ClassTopology: {WorldNodes, WorldReplication},
		faults.ClassAll:      EveryWorldField,
	}
	for c, want := range cases {
		if got := DefaultWorld([]faults.Class{c}); !slices.Equal(got, want) {
			t.Errorf("DefaultWorld(%s) = %v, want %v", c, got, want)
		}
	}
}

// edgesOf are the edges of the registered variant name in the world base,
// under classes, drawing the fields in world, as a target builds them.
func edgesOf(name string, base sim.Config, classes []faults.Class, world []WorldField) Edges {
	v, err := variants.Lookup(name)
	if err != nil {
		panic(err)
	}
	return Edges{Variant: v.Name, Envelope: v.Envelope, Config: base, Classes: classes, World: world}
}
