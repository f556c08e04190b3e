package explore

import (
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/variants"
)

// TestReproRecordsTheSeedsWorld: a repro holds the world the seed ran in,
// and replays it without redrawing anything.
func TestReproRecordsTheSeedsWorld(t *testing.T) {
	all := []faults.Class{faults.ClassAll}
	tg := Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: all, World: envelope.DefaultWorld(all)}
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
	tg := Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: threads, World: envelope.EveryWorldField}
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
