package variants_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// fenced with its catch-up skipped hands out tokens that go backwards once
// three nodes have each been down in turn and the clocks do not make up
// for it: every node's counter then lags a different amount, and a
// majority without the one most ahead draws a token below the last. The
// resource refuses those holders, and the checker counts holders it
// refuses as no holders: the clients starve while a majority is up.
// fenced itself, in the same world, does not.
//
// The hosts' clocks read an hour before the epoch, so that they add
// nothing to the tokens: the counters alone carry them. That is beyond
// fenced's envelope, whose clocks agree within 5 s (fencedLiveness), so
// the mutant's starvation is expected there, not a bug; but it is where
// the catch-up earns its keep: fenced stays live with clocks an hour out,
// as long as a copy of each counter survives. Inside the envelope, tokens
// drawn from the clocks alone rise past the last within 5 s, and no sweep
// tells the mutant from fenced (see its entry in Mutants).
func TestRefusedHoldersFlagFencedWithoutCatchUp(t *testing.T) {
	cfg, plan := clocksAddNothing()
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
	refused := func(o explore.Outcome) bool {
		return slices.ContainsFunc(o.Findings, func(f explore.Finding) bool {
			return f.Kind.IsLiveness() && strings.Contains(f.Story, "holders the resource refused")
		})
	}
	if o := run(explore.Target{Variant: mutant.Variant, Config: cfg}); !refused(o) {
		t.Fatalf("the mutant's holders the resource refused are not reported: %v", o.Findings)
	}
	if o := run(explore.Target{Variant: fenced, Config: cfg}); o.Failed() || refused(o) {
		t.Fatalf("fenced starves in the same world: %v", o.Findings)
	}
}

// clocksAddNothing is a small world in which fenced's tokens rise by the
// counters alone: the hosts' clocks read an hour before the epoch, while
// the three nodes are down in turn (each counter copy missing one draw).
func clocksAddNothing() (sim.Config, faults.Plan) {
	cfg := explore.SmallWorld(3, 2, 1)
	cfg.Acquisitions, cfg.Duration = 0, 200*time.Second
	return cfg, faults.Plan{Events: []faults.Event{
		{Kind: faults.Crash, Node: 1, At: 1 * time.Second, For: 60 * time.Second},
		{Kind: faults.Crash, Node: 2, At: 62 * time.Second, For: 60 * time.Second},
		{Kind: faults.Crash, Node: 0, At: 123 * time.Second, For: 30 * time.Second},
	}, Clocks: []faults.Clock{
		{Kind: faults.HostProcess, Index: 0, Offset: -time.Hour},
		{Kind: faults.HostProcess, Index: 1, Offset: -time.Hour},
	}}
}
