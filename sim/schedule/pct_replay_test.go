package schedule_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/repro"
	"github.com/locksim/locksim/sim/schedule"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// An external test: it runs seeds and repros (seedrun, repro), which import
// schedule; pct_test.go tests PCT's chooser from inside.

// A seed under PCT is deterministic, runs otherwise than its swarm run,
// and its repro and replay command carry the scheduler.
func TestPCTSeedsReplay(t *testing.T) {
	tg := seedrun.DefaultTarget(variant("original"), faults.ClassThreads)
	tg.Config.Duration = 3 * 60e9
	pct := tg
	pct.PCT = &schedule.PCT{Depth: 3, Steps: schedule.DefaultPCTSteps}
	a, err := seedrun.RunSeed(pct, 5, seedrun.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := seedrun.RunSeed(pct, 5, seedrun.DefaultOptions())
	swarm, _ := seedrun.RunSeed(tg, 5, seedrun.DefaultOptions())
	if a.Hash != b.Hash || a.Hash == swarm.Hash {
		t.Fatalf("hashes: pct %x then %x, swarm %x: want pct twice the same, and not swarm's", a.Hash, b.Hash, swarm.Hash)
	}
	data, err := repro.NewRepro(pct, a).Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := repro.DecodeReproFor(data, pct.Variant)
	if err != nil || r.PCT == nil || *r.PCT != *pct.PCT {
		t.Fatalf("the repro's scheduler: %+v, %v", r.PCT, err)
	}
	if o, err := repro.Replay(r, seedrun.Options{Check: r.CheckOptions()}); err != nil || o.Hash != a.Hash {
		t.Fatalf("replayed to %x (%v), want %x", o.Hash, err, a.Hash)
	}
	if cmd := seedrun.ReplayCommand(pct, 5); !strings.Contains(cmd, " -pct 3") {
		t.Fatalf("replay command %q does not carry -pct 3", cmd)
	}
	for _, bad := range []schedule.PCT{{Depth: 0, Steps: 10}, {Depth: 17, Steps: 100}, {Depth: 5, Steps: 2}} {
		bt := tg
		bt.PCT = &bad
		if err := bt.Validate(); err == nil {
			t.Errorf("PCT %+v was accepted", bad)
		}
	}
}

// variant is the registered variant called name; tests name only real ones.
var variant = variants.MustLookup
