package seedrun_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/seedrun"
)

// A failure that replays is confirmed as itself, with its history; one
// whose rerun is another run (here a recorded hash that no run of the seed
// gives) is a nondeterminism finding, a bug, before the rerun's own
// findings, and says that two runs in this process agree.
func TestConfirmTellsARunThatDoesNotReplay(t *testing.T) {
	target := seedrun.DefaultTarget(variant("original"))
	first, err := seedrun.RunSeed(target, 1, seedrun.DefaultOptions())
	if err != nil || !first.Failed() {
		t.Fatalf("seed 1 of the original should fail: %v %v", first, err)
	}
	opt := seedrun.DefaultOptions()
	opt.Keep = true
	same, err := seedrun.Confirm(target, first, opt)
	if err != nil || same.Hash != first.Hash || len(same.History.Events) == 0 || same.Findings[0].Kind == model.Nondeterminism {
		t.Fatalf("a run that replays is not confirmed as itself with its history: %v", err)
	}
	elsewhere := first
	elsewhere.Hash ^= 1
	got, err := seedrun.Confirm(target, elsewhere, opt)
	if err != nil {
		t.Fatal(err)
	}
	f := got.Findings[0]
	if f.Kind != model.Nondeterminism || !f.Bug() || !got.Failed() || len(got.Findings) != len(first.Findings)+1 {
		t.Fatalf("a run that did not replay is not a nondeterminism bug before the rerun's findings: %+v", got.Findings)
	}
	if !strings.Contains(f.Story, "seed 1 does not replay") || !strings.Contains(f.Story, "agree with each other") {
		t.Fatalf("the finding does not say what happened: %s", f.Story)
	}
	if d := seedrun.Diverge(target, 1, first.Plan); d != nil {
		t.Fatalf("two runs of a seed of the original diverge: %+v", d)
	}
}
