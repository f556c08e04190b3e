package seedrun

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/envelope"
)

// Finding is one violation of a run, judged against the variant's envelope:
//
//   - a bug of the variant: it breaks a property the variant promises, and
//     the run broke none of the assumptions that property rests on before
//     it (inside the envelope). A panic or a livelock is always a bug;
//   - expected: it breaks a promised property, but only after the run broke
//     an assumption (outside the envelope): Breach says which, when and by
//     what fault;
//   - not promised: the variant does not claim the property (a lock-level
//     overlap of a fenced variant): information, never a failure.
type Finding struct {
	model.Violation
	// Promised: the variant promises the property the violation breaks.
	Promised bool `json:"promised"`
	// Breach is the first breach of an assumption the property rests on, at
	// or before the violation; nil: the run was inside the envelope.
	Breach *envelope.Breach `json:"breach,omitempty"`
}

// Stuck says why nobody got the lock in a liveness finding of o, from the
// run's own state (model.ExplainWait): "" for another kind, or when o kept
// no history (Options.Keep).
func (o Outcome) Stuck(f Finding) string {
	if len(o.History.Clients) == 0 {
		return ""
	}
	why, ok := model.ExplainWait(o.History, f.Violation)
	if !ok {
		return ""
	}
	return why.String()
}

// Bug reports whether the finding is a bug of the variant: promised, and
// inside the envelope.
func (f Finding) Bug() bool { return f.Promised && f.Breach == nil }

// Expected reports whether the finding breaks a promised property, but
// only outside the envelope (after a breach).
func (f Finding) Expected() bool { return f.Promised && f.Breach != nil }

// Standing is the finding's judgement in a word: "bug", "expected" or
// "not promised".
func (f Finding) Standing() string {
	switch {
	case !f.Promised:
		return "not promised"
	case f.Breach != nil:
		return "expected"
	}
	return "bug"
}

// Note is one line saying why a finding that is no bug is not: "expected:
// clock-jumps broken at 82.015s by ...", or "not promised: fenced does not
// promise mutual exclusion". Empty for a bug.
func (f Finding) Note(variant string) string {
	switch {
	case !f.Promised:
		return fmt.Sprintf("not promised: %s does not promise %s", variant, propertyOf(f.Kind))
	case f.Breach != nil:
		return "expected: " + f.Breach.String()
	}
	return ""
}

// propertyOf is the property a violation of kind k breaks; 0 for the
// kinds every variant is held to (panic, livelock).
func propertyOf(k model.ViolationKind) algorithm.Property {
	switch k {
	case model.MutualExclusion:
		return algorithm.MutualExclusion
	case model.LostUpdate, model.DataLoss:
		return algorithm.ResourceSafety
	case model.Liveness, model.Leftover, model.LeakedLock, model.GaveUpWhileFree, model.StarvedWhileFree:
		return algorithm.Liveness
	}
	return 0
}

// Classify judges every violation of v against env, given the breaches of
// the run (envelope.Breaches) and the liveness bound the verdict was checked with
// (true time, as every instant of a verdict is). A liveness violation's Time is the start of the wait (or the stay
// of an item) it reports, and its End when that passed the bound: a breach
// before then is one the wait lived through.
func Classify(env algorithm.Envelope, v model.Verdict, breaches []envelope.Breach, livenessBound time.Duration) []Finding {
	if len(v.Violations) == 0 {
		return nil
	}
	out := make([]Finding, len(v.Violations))
	for i, x := range v.Violations {
		f := Finding{Violation: x}
		p := propertyOf(x.Kind)
		f.Promised = p == 0 || env.Promised().Has(p)
		if f.Promised && p != 0 {
			horizon := x.Time
			if x.Kind.IsLiveness() {
				horizon = max(horizon+int64(livenessBound), x.End)
			}
			for j := range breaches {
				if b := breaches[j]; b.Time <= horizon && b.Protects(x.Kind) {
					f.Breach = &b
					break
				}
			}
		}
		out[i] = f
	}
	return out
}

// String is the finding as the CLI prints it: its violation and its
// standing (bug, expected, not promised), with the breach it came after.
func (f Finding) String() string {
	s := f.Violation.String() + " [" + f.Standing()
	if f.Breach != nil {
		s += ", after " + f.Breach.String()
	}
	return s + "]"
}

// String is the outcome in words: the seed, what its findings make of
// it, and each finding on a line.
func (o Outcome) String() string {
	var b strings.Builder
	switch {
	case len(o.Findings) == 0 && o.Verdict.OK():
		fmt.Fprintf(&b, "seed %d: ok, no violation", o.Seed)
	case o.Bugs() > 0:
		fmt.Fprintf(&b, "seed %d: a bug: a promised property broke inside the envelope", o.Seed)
	case o.Expected():
		fmt.Fprintf(&b, "seed %d: expected: promised properties broke only after the run broke an assumption", o.Seed)
	default:
		fmt.Fprintf(&b, "seed %d: ok for what the variant promises", o.Seed)
	}
	for _, f := range o.Findings {
		fmt.Fprintf(&b, "\n  %s", f)
		if stuck := o.Stuck(f); stuck != "" {
			fmt.Fprintf(&b, "\n    why nobody got it: %s", stuck)
		}
	}
	if n := o.Verdict.UnsupportedNote(); n != "" {
		b.WriteString("\n  " + n)
	}
	return b.String()
}
