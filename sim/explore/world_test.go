package explore

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
	tg := Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassAll},
		World: DefaultWorld([]faults.Class{faults.ClassAll})}
	seen := map[string]map[int]bool{"nodes": {}, "replication": {}, "hosts": {}, "threads": {}}
	var longHold, shortTTL, tail, restarting bool
	for seed := uint64(1); seed <= 2000; seed++ {
		c := tg.At(seed).Config
		if err := c.Validate(); err != nil {
			t.Fatalf("seed %d drew an invalid world: %v", seed, err)
		}
		if again := tg.At(seed).Config; again != c {
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
	tg := Target{Variant: variant("original"), Config: base, Classes: []faults.Class{faults.ClassAll}, World: world}
	nodes := map[int]bool{}
	for seed := uint64(1); seed <= 500; seed++ {
		c := tg.At(seed).Config
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

// TestReproRecordsTheSeedsWorld: a repro holds the world the seed ran in,
// and replays it without redrawing anything.
func TestReproRecordsTheSeedsWorld(t *testing.T) {
	all := []faults.Class{faults.ClassAll}
	tg := Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: all, World: DefaultWorld(all)}
	res, err := Sweep(tg, SweepOptions{From: 1, Count: 200})
	if err != nil || res.Failed == 0 {
		t.Fatalf("no failing seed of the original in 200 (err %v)", err)
	}
	o := res.Failures[0]
	r := NewRepro(tg, o)
	if r.Config != tg.At(o.Seed).Config || r.Config != o.Config || !slices.Equal(r.World, tg.World) {
		t.Fatalf("repro config %+v, world %v; the seed ran in %+v", r.Config, r.World, o.Config)
	}
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRepro(data, variants.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Replay(back, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash != o.Hash {
		t.Errorf("replay hash %016x, the sweep's %016x", again.Hash, o.Hash)
	}
}

// TestMinimizeShrinksTheWorld: minimising a failure found in a drawn world
// keeps it failing, runs in the seed's world, and moves the fields the bug
// does not need back to the post's: two threads of one host share the
// lock whatever the TTL, holds, latency and versions.
func TestMinimizeShrinksTheWorld(t *testing.T) {
	threads := []faults.Class{faults.ClassThreads}
	tg := Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: threads, World: EveryWorldField}
	tg.Config.Duration = 3 * time.Minute
	res, err := Sweep(tg, SweepOptions{From: 1, Count: 50})
	if err != nil || res.Failed == 0 {
		t.Fatalf("no failing seed of the original under threads in 50 (err %v)", err)
	}
	o := res.Failures[0]
	kind := o.Findings[0].Kind
	m, err := Minimize(tg, o.Seed, o.Plan, kind, 500)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Outcome.Verdict.First(kind); !ok {
		t.Fatalf("the minimal run lost its %s", kind)
	}
	if len(m.Target.World) != 0 {
		t.Errorf("the minimal target still draws %v; it should be the seed's world", m.Target.World)
	}
	c, d, drawn := m.Target.Config, sim.DefaultConfig(), o.Config
	if c.Hosts > drawn.Hosts || c.ThreadsPerHost > max(drawn.ThreadsPerHost, o.Plan.ThreadsPerHost) || c.Nodes > drawn.Nodes {
		t.Errorf("the minimal world (%+v) is bigger than the drawn one (%+v)", c, drawn)
	}
	if c.TTL != d.TTL || c.HoldMin != d.HoldMin || c.HoldMax != d.HoldMax ||
		c.LatencyMax != d.LatencyMax || c.RestartingVersions {
		t.Errorf("the minimal world kept fields the bug does not need: %+v (drawn %+v)", c, drawn)
	}
}
