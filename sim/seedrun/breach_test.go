package seedrun_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

const sec = int64(time.Second)

func TestClassify(t *testing.T) {
	lease := variant("corrected").Envelope
	fencedEnv := variant("fenced").Envelope
	v := model.Verdict{Violations: []model.Violation{
		{Kind: model.MutualExclusion, Time: 50 * sec},
		{Kind: model.LostUpdate, Time: 70 * sec},
		{Kind: model.Liveness, Time: 100 * sec},
		{Kind: model.Panic, Time: 110 * sec},
	}}
	late := envelope.Breach{Assumption: algorithm.UseWithinValidity, Time: 60 * sec, Safety: true}
	loss := envelope.Breach{Assumption: algorithm.MessageLoss, Time: 0, Safety: false}
	fs := seedrun.Classify(lease, v, []envelope.Breach{late, loss}, 180*time.Second)
	want := []string{"bug", "expected", "expected", "bug"}
	for i, f := range fs {
		if f.Standing() != want[i] {
			t.Errorf("violation %d (%s): %s, want %s (breach %v)", i, f.Kind, f.Standing(), want[i], f.Breach)
		}
	}
	// A late use excuses the lost update, not the overlap before it; a
	// liveness assumption excuses only liveness.
	if fs[1].Breach.Assumption != algorithm.UseWithinValidity || fs[2].Breach.Assumption != algorithm.MessageLoss {
		t.Errorf("breaches named: %v, %v", fs[1].Breach, fs[2].Breach)
	}
	// fenced does not promise mutual exclusion.
	if f := seedrun.Classify(fencedEnv, v, nil, 180*time.Second)[0]; f.Promised || f.Bug() || !strings.HasPrefix(f.Note("fenced"), "not promised") {
		t.Errorf("fenced's overlap: %+v", f)
	}
	// A breach after the violation excuses nothing.
	if f := seedrun.Classify(lease, model.Verdict{Violations: v.Violations[:1]}, []envelope.Breach{{Assumption: algorithm.ClockRate, Time: 51 * sec, Safety: true}}, 180*time.Second)[0]; !f.Bug() {
		t.Errorf("a breach after the violation excused it: %+v", f)
	}
}

// Plans drawn inside an envelope break none of its assumptions that the
// plan and the world alone decide: clocks, jumps, wipes, loss,
// duplication, deployment lapses, replication. A seed that searches
// safety alone breaks no safety assumption; one that searches liveness
// too breaks none at all; and a variant whose liveness assumes more than
// its safety has its liveness assumptions broken by some safety seeds
// (they are not drawn inside them).
func TestInsideDrawsBreakNoPlanAssumption(t *testing.T) {
	for _, v := range variants.All() {
		tg := seedrun.DefaultTarget(v)
		livenessBroken := 0
		for seed := uint64(1); seed <= 2000; seed++ {
			plan, cfg := tg.PlanFor(seed), tg.At(seed).Config
			for _, b := range envelope.Breaches(v.Envelope, cfg, plan, model.History{End: int64(cfg.Duration), Replicas: cfg.Replication}) {
				if b.Safety || envelope.SearchesLiveness(seed) {
					t.Fatalf("%s seed %d: the plan drawn inside breaks %v", v.Name, seed, b)
				}
				livenessBroken++
			}
		}
		moreForLiveness := v.Envelope.Safety.And(v.Envelope.Liveness) != v.Envelope.Safety
		if moreForLiveness && livenessBroken == 0 {
			t.Errorf("%s: no safety seed of 2000 breaks a liveness assumption: the safety search is narrowed by them", v.Name)
		}
	}
}
