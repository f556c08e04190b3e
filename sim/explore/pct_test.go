package explore

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
)

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
