package seedrun

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// Confirm runs first's seed and plan again in this process, with opt (to
// keep its history for a report), and checks that it is the same run: the
// same trace hash. It is what every report of a failure found elsewhere (a
// worker, an earlier process, a repro file) goes through, so that a
// failure that does not replay is never reported as a pass: the rerun of a
// seed that runs another way is a nondeterminism finding of its own
// (Nondeterministic), whatever the rerun's own verdict.
func Confirm(t Target, first Outcome, opt Options) (Outcome, error) {
	again, err := RunPlan(t, first.Seed, first.Plan, opt)
	if err != nil {
		return first, err
	}
	if again.Hash == first.Hash {
		return again, nil
	}
	return Nondeterministic(t, first, again), nil
}

// Nondeterministic is again (a second run of first's seed and plan, which
// did not give first's trace hash) with a nondeterminism finding before
// its own: what the first run found, what the second did, and where two
// further runs of the seed in this process first differ (Diverge), or
// that they agree and the process the first ran in ran it another way.
func Nondeterministic(t Target, first, again Outcome) Outcome {
	story := fmt.Sprintf("seed %d does not replay: run again with the same world and plan it was another run (trace hash %016x, then %016x)",
		first.Seed, first.Hash, again.Hash)
	story += "; the first run " + findingsText(first) + ", the second " + findingsText(again)
	at := int64(0)
	if d := Diverge(t, first.Seed, first.Plan); d != nil {
		if d.Index >= 0 {
			story += fmt.Sprintf("; two more runs here first differ at trace line %d: %q against %q", d.Index, d.LineA, d.LineB)
			at = d.At
		} else {
			story += "; two more runs here differ only in their hash"
		}
	} else {
		story += "; two more runs here agree with each other, so the process of the first run ran it another way (a package's state left by earlier runs, or randomness or time read when that process started)"
	}
	story += ". The lock draws on what locksim does not control: math/rand/v2's or crypto/rand's global functions, the time outside the run, a map's order, a select between two ready channels; feed its choices from the client's seeded Rand"
	v := model.Violation{Kind: model.Nondeterminism, Time: at, Story: story}
	out := again
	out.Verdict.Violations = append([]model.Violation{v}, again.Verdict.Violations...)
	out.Findings = append([]Finding{{Violation: v, Promised: true}}, again.Findings...)
	return out
}

// findingsText is what a run found, in a few words: "found mutual-exclusion
// at 1.2s [bug], lost-update ..." or "found nothing".
func findingsText(o Outcome) string {
	if len(o.Findings) == 0 {
		return "found nothing"
	}
	parts := make([]string, 0, len(o.Findings))
	for _, f := range o.Findings {
		parts = append(parts, fmt.Sprintf("%s at %s [%s]", f.Kind, model.Seconds(f.Time), f.Standing()))
	}
	return "found " + strings.Join(parts, ", ")
}

// Divergence is where two runs of one seed first differ.
type Divergence struct {
	Index        int   // the first trace line that differs; -1: the traces agree, the hashes do not
	At           int64 // true time of that line in the first run (0 when it has none)
	LineA, LineB string
}

// Diverge runs seed and plan twice in this process with traces and says
// where they first differ: their trace lines, then their histories'
// events. Nil when they are the same run (or a run fails to start).
func Diverge(t Target, seed uint64, plan faults.Plan) *Divergence {
	opt := DefaultOptions()
	opt.Keep, opt.Trace = true, true
	a, err := RunPlan(t, seed, plan, opt)
	if err != nil {
		return nil
	}
	b, err := RunPlan(t, seed, plan, opt)
	if err != nil {
		return nil
	}
	return diverge(a, b)
}

// diverge compares two traced outcomes.
func diverge(a, b Outcome) *Divergence {
	if a.Hash == b.Hash {
		return nil
	}
	la, ta := traceLines(a)
	lb, _ := traceLines(b)
	i, x, y := sim.FirstDifference(la, lb)
	d := &Divergence{Index: i, LineA: x, LineB: y}
	if i >= 0 && i < len(ta) {
		d.At = ta[i]
	}
	return d
}

// traceLines are an outcome's trace and history as lines, with their times.
func traceLines(o Outcome) ([]string, []int64) {
	var lines []string
	var at []int64
	for _, e := range o.Trace {
		lines = append(lines, model.Seconds(e.Time)+" "+e.What)
		at = append(at, e.Time)
	}
	for _, e := range o.History.Events {
		who := fmt.Sprint(e.Client)
		if e.Client >= 0 && e.Client < len(o.History.Clients) {
			who = o.History.Clients[e.Client].Name
		}
		lines = append(lines, fmt.Sprintf("%s %s %s granted=%v valid-to=%d value=%d %s", model.Seconds(e.Time), who, e.Kind, e.Granted, e.ValidUntilTrue, e.Value, e.Reason))
		at = append(at, e.Time)
	}
	return lines, at
}
