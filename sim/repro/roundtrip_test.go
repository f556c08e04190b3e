package repro_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/internal/enginetest"
	"github.com/locksim/locksim/sim/repro"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// A repro round-trips, replays to the same hash, and bad files say why.
func TestReproRoundTripAndReplay(t *testing.T) {
	tg := shortTarget("original", faults.ClassThreads)
	o, err := seedrun.RunSeed(tg, 3, seedrun.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	data, err := repro.NewRepro(tg, o).Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := repro.DecodeRepro(data, variants.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	again, err := repro.Replay(r, seedrun.DefaultOptions())
	if err != nil || again.Hash != o.Hash || len(again.Verdict.Violations) != len(o.Verdict.Violations) {
		t.Fatalf("replay differs: %x vs %x (err %v)", again.Hash, o.Hash, err)
	}
	bad := map[string]string{
		"not json":        "{",
		"unknown field":   strings.Replace(string(data), `"format"`, `"colour": 1, "format"`, 1),
		"other format":    strings.Replace(string(data), `"format": 1`, `"format": 9`, 1),
		"unknown variant": strings.Replace(string(data), `"variant": "original"`, `"variant": "nope"`, 1),
		"trailing data":   string(data) + "{}",
		"plan outside its classes": strings.Replace(string(data), `"classes": [
    "threads"
  ]`, `"classes": [
    "loss"
  ]`, 1),
	}
	for name, in := range bad {
		if _, err := repro.DecodeRepro([]byte(in), variants.Lookup); err == nil || !strings.HasPrefix(err.Error(), "repro: ") {
			t.Errorf("%s: want a repro: error, got %v", name, err)
		}
	}
}

var shortTarget = enginetest.ShortTarget
