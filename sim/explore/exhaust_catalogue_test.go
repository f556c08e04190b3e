package explore

import (
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// This test stays here, beside the catalogue it checks against (entryOf,
// catalogue_test.go); the rest of Exhaust's tests are sim/exhaust's.

// The original's safety and liveness bugs that fit a small world, each
// found by Exhaust with the fewest faults there are within its menu: the
// level before the counterexample's has no failing schedule, and the
// counterexample is the catalogue's entry (BUGS.md). The fault counts are
// what the bugs take: none for the shared host name, the lock's name and
// the literal reading; one pause past the TTL; one crash at replication 1;
// three wiped restarts (every node a waiter's acquire passes through, since
// the original gives up at the first refusal); one lost write.
func TestExhaustFindsTheOriginalsBugsWithTheFewestFaults(t *testing.T) {
	base := SmallWorld(3, 2, 1)
	shared := base
	shared.Hosts, shared.ThreadsPerHost = 1, 2
	lockName, keyData := base, base
	lockName.AppData, keyData.AppData = sim.AppDataLockName, sim.AppDataKey
	safetyOnly := model.DefaultCheckOptions()
	safetyOnly.SkipLiveness = true
	// Four nodes, the key on two of them: a move can take it off both.
	spread := SmallWorld(4, 2, 1)
	spread.Replication = 2
	ttl := base.TTL
	for _, tc := range []struct {
		entry, variant string
		cfg            sim.Config
		menu           *Menu // nil: inside the envelope
		plan           *faults.Plan
		beyond         []algorithm.Assumption
		classes        []faults.Class
		strict         bool // count violations outside the envelope (beyond)
		check          model.CheckOptions
		faults         int
	}{
		{entry: "host-identity", variant: "original", cfg: shared, faults: 0},
		{entry: "data-under-lock-name", variant: "original", cfg: lockName, faults: 0},
		{entry: "literal-clear", variant: "original-literal", cfg: keyData, faults: 0},
		{entry: "no-validity", variant: "original", cfg: base, menu: &Menu{PausePast: true, PastBy: ttl / 2}, faults: 1},
		{entry: "quorum-replication-1", variant: "original", cfg: SmallWorld(1, 2, 1), faults: 1},
		{entry: "partial-locks", variant: "original", cfg: base, menu: &Menu{Loss: true}, faults: 1},
		{entry: "over-strict-quorum", variant: "original", cfg: SmallWorld(4, 2, 1), menu: &Menu{Crash: true, CrashFor: 20 * time.Second}, faults: 1},
		{entry: "local-time", variant: "original", cfg: base, menu: &Menu{Loss: true}, faults: 1,
			plan: &faults.Plan{Zones: []faults.Zone{{Host: 1, Offset: -4 * time.Hour}}}},
		{entry: "amnesia", variant: "original", cfg: base, menu: &Menu{Wipe: true, WipeFor: time.Millisecond}, check: safetyOnly, faults: 3},
		{entry: "empty-topology", variant: "original", cfg: base, menu: &Menu{Moves: true, EmptyFor: ttl / 2}, check: safetyOnly, faults: 1},
		{entry: "topology", variant: "original", cfg: spread, menu: &Menu{MovesWhileHeld: true}, check: safetyOnly, faults: 1},
		{entry: "stale-topology", variant: "original", cfg: spread, menu: &Menu{Moves: true}, check: safetyOnly, faults: 2},
		{entry: "clock-skew", variant: "original", cfg: base, menu: &Menu{ClockSteps: []time.Duration{ttl + ttl/10}},
			beyond: []algorithm.Assumption{algorithm.ClockError}, classes: []faults.Class{faults.ClassSkew}, strict: true, faults: 1},
	} {
		t.Run(tc.entry, func(t *testing.T) {
			if tc.faults == 3 && testing.Short() {
				t.Skip("three faults: a few thousand schedules")
			}
			res, err := Exhaust(Target{Variant: variant(tc.variant), Config: tc.cfg, Plan: tc.plan, Beyond: tc.beyond, Classes: tc.classes},
				ExhaustOptions{MaxFaults: tc.faults, Menu: tc.menu, Check: tc.check, Strict: tc.strict})
			if err != nil {
				t.Fatal(err)
			}
			x := res.Counterexample
			if x == nil {
				t.Fatalf("no counterexample with ≤ %d faults: %s", tc.faults, res)
			}
			if got := x.Schedule.Faults(); got != tc.faults || len(res.Levels) != tc.faults+1 {
				t.Fatalf("the counterexample has %d faults, want %d: %s", got, tc.faults, res)
			}
			for _, l := range res.Levels[:tc.faults] {
				if l.Failing > 0 {
					t.Fatalf("level %d has %d failing schedules, yet the counterexample is at %d", l.Faults, l.Failing, tc.faults)
				}
			}
			if got := entryOf(tc.variant, *x); got != tc.entry {
				t.Fatalf("the counterexample is %q, want %q: %s", got, tc.entry, res)
			}
			t.Log(res)
		})
	}
}
