package seedrun

import (
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/envelope"
)

// An Outcome as it travels as JSON (from a worker process, or into a
// sweep's journal), and the outcome of a run that never ended normally.

// OutcomeRecord is the part of an Outcome that travels as JSON, from a
// worker or into a journal: no history or trace, and no world or plan,
// which the seed draws again.
type OutcomeRecord struct {
	Seed     uint64            `json:"seed"`
	Hash     uint64            `json:"hash"`
	Events   int64             `json:"events"`
	Verdict  *model.Verdict    `json:"verdict,omitempty"`
	Findings []Finding         `json:"findings,omitempty"`
	Breaches []envelope.Breach `json:"breaches,omitempty"`
}

// RecordOf is o's record, with its verdict when withVerdict.
func RecordOf(o Outcome, withVerdict bool) OutcomeRecord {
	r := OutcomeRecord{Seed: o.Seed, Hash: o.Hash, Events: o.Events, Findings: o.Findings, Breaches: o.Breaches}
	if withVerdict {
		r.Verdict = &o.Verdict
	}
	return r
}

// Outcome is the record's Outcome under run options run, in target t's
// world for the seed and with plan (nil: the seed's own) when world.
func (rec OutcomeRecord) Outcome(t Target, plan *faults.Plan, run Options, world bool) Outcome {
	o := Outcome{Seed: rec.Seed, Hash: rec.Hash, Events: rec.Events, Findings: rec.Findings, Breaches: rec.Breaches,
		strict: run.Strict, check: run.Check}
	if rec.Verdict != nil {
		o.Verdict = *rec.Verdict
	}
	if world {
		at := t.At(rec.Seed)
		o.Config = at.Config
		if plan != nil {
			o.Plan = *plan
		} else {
			o.Plan = at.PlanFor(rec.Seed)
		}
	}
	return o
}

// ProcessDeath: the run's finding is one that took its worker down, or
// may take the process it runs in down (model.ViolationKind.IsProcessDeath):
// it must not run again in a process that matters.
func (o Outcome) ProcessDeath() bool {
	for _, v := range o.Verdict.Violations {
		if v.Kind.IsProcessDeath() {
			return true
		}
	}
	return false
}

// FailureOutcome is the outcome of a run that never ended normally (its
// worker crashed, or it hung): one violation of kind, saying detail, which
// every variant promises against, and no history.
func FailureOutcome(t Target, seed uint64, plan *faults.Plan, run Options, kind model.ViolationKind, detail string) Outcome {
	v := model.Verdict{Violations: []model.Violation{{Kind: kind, Clients: []int{}, Story: detail}}}
	o := OutcomeRecord{Seed: seed, Verdict: &v}.Outcome(t, plan, run, true)
	o.Findings = Classify(t.Variant.Envelope, v, nil, 0)
	return o
}
