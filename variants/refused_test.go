package variants_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// fenced with its catch-up skipped hands out tokens that go backwards once
// three nodes have each been down in turn: every node's counter then lags
// a different amount, and a majority without the one most ahead draws a
// token below the last. The resource refuses those holders, and the
// checker counts holders it refuses as no holders: the clients starve
// while a majority is up. fenced itself, in the same world, does not.
func TestRefusedHoldersFlagFencedWithoutCatchUp(t *testing.T) {
	cfg := explore.SmallWorld(3, 2, 1)
	cfg.Acquisitions, cfg.Duration = 0, 200*time.Second
	plan := faults.Plan{Events: []faults.Event{
		{Kind: faults.Crash, Node: 1, At: 1 * time.Second, For: 60 * time.Second},
		{Kind: faults.Crash, Node: 2, At: 62 * time.Second, For: 60 * time.Second},
		{Kind: faults.Crash, Node: 0, At: 123 * time.Second, For: 30 * time.Second},
	}}
	fenced, err := variants.Lookup("fenced")
	if err != nil {
		t.Fatal(err)
	}
	var mutant *variants.Mutant
	for _, m := range variants.Mutants() {
		if m.Name == "fenced~catch-up-skipped" {
			mutant = &m
		}
	}
	if mutant == nil {
		t.Fatal("no mutant fenced~catch-up-skipped")
	}
	run := func(tg explore.Target) explore.Outcome {
		o, err := explore.RunPlan(tg, 1, plan, explore.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := run(explore.Target{Variant: mutant.Variant, Config: cfg})
	if !o.Failed() || !strings.Contains(o.Findings[0].Story, "holders the resource refused") {
		t.Fatalf("the mutant is not flagged for holders the resource refused: %v", o.Findings)
	}
	if o := run(explore.Target{Variant: fenced, Config: cfg}); o.Failed() {
		t.Fatalf("fenced fails in the same world: %v", o.Findings)
	}
}
