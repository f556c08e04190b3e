package repro_test

import (
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/repro"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// Repros of two scenarios that share a variant and seed do not overwrite
// each other; the same scenario written twice is one file.
func TestReproNamesDoNotCollide(t *testing.T) {
	dir := t.TempDir()
	write := func(class faults.Class) string {
		tg := seedrun.Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: []faults.Class{class}}
		tg.Config.Duration = 10 * time.Second
		o, err := seedrun.RunSeed(tg, 3, seedrun.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		path, err := repro.WriteRepro(dir, repro.NewRepro(tg, o))
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b, again := write(faults.ClassThreads), write(faults.ClassPause), write(faults.ClassThreads)
	if a == b {
		t.Fatalf("two scenarios wrote one file, %s", a)
	}
	if again != a {
		t.Errorf("the same scenario wrote %s, then %s", a, again)
	}
	for _, p := range []string{a, b} {
		if _, err := repro.ReadRepro(p, variants.Lookup); err != nil {
			t.Error(err)
		}
	}
}
