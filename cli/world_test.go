package cli

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// TestReplayCommandRedrawsTheWorld: the command printed with a failure,
// parsed by the CLI, draws the same world for the seed: pinned fields
// stay pinned (even at their default values), drawn ones are drawn again.
func TestReplayCommandRedrawsTheWorld(t *testing.T) {
	v, err := variants.Lookup("original")
	if err != nil {
		t.Fatal(err)
	}
	all := []faults.Class{faults.ClassAll}
	crash := []faults.Class{faults.ClassCrash}
	without := func(fs []envelope.WorldField, drop ...envelope.WorldField) []envelope.WorldField {
		return slices.DeleteFunc(slices.Clone(fs), func(f envelope.WorldField) bool { return slices.Contains(drop, f) })
	}
	pinned := sim.DefaultConfig()
	pinned.Nodes, pinned.HoldMin, pinned.HoldMax, pinned.Duration = 6, 3*time.Second, 9*time.Second, 4*time.Minute
	cases := []explore.Target{
		{Variant: v, Config: sim.DefaultConfig(), Classes: all, World: envelope.DefaultWorld(all)},
		{Variant: v, Config: pinned, Classes: all, World: without(envelope.DefaultWorld(all), envelope.WorldNodes, envelope.WorldHold)},
		// a pin at the default value must still be a pin
		{Variant: v, Config: sim.DefaultConfig(), Classes: all, World: without(envelope.DefaultWorld(all), envelope.WorldReplication)},
		// more than the class draws by default
		{Variant: v, Config: pinned, Classes: crash, World: []envelope.WorldField{envelope.WorldHosts, envelope.WorldTTL}},
		// nothing drawn
		{Variant: v, Config: pinned, Classes: all},
	}
	for _, want := range cases {
		for _, seed := range []uint64{1, 77} {
			cmd := explore.ReplayCommand(want, seed)
			args := strings.Fields(strings.TrimPrefix(cmd, seedrun.CommandPrefix+" replay "))
			f := newFlags("replay", "", "")
			var sc scenarioFlags
			sc.register(f)
			f.Uint64("seed", 1, "")
			if _, code, done := f.parse(args, io.Discard, io.Discard); done {
				t.Fatalf("%s: the CLI does not parse it (exit %d)", cmd, code)
			}
			got, err := sc.target(f)
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			if !slices.Equal(got.World, want.World) {
				t.Errorf("%s: draws %v, the failure's target drew %v", cmd, got.World, want.World)
			}
			if g, w := got.At(seed).Config, want.At(seed).Config; g != w {
				t.Errorf("%s: seed %d runs in\n  %+v\nnot in\n  %+v", cmd, seed, g, w)
			}
		}
	}
}
