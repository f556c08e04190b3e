package sim

import "fmt"

// DeterminismError says where two runs of one scenario diverged.
type DeterminismError struct {
	HashA, HashB uint64
	Index        int    // first differing trace line (0-based); -1 if the traces agree but hashes differ
	LineA, LineB string // that line in each run ("<end>" when one trace is shorter)
}

func (e *DeterminismError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("sim: nondeterministic: hashes %016x and %016x differ although the traces agree", e.HashA, e.HashB)
	}
	return fmt.Sprintf("sim: nondeterministic: first difference at trace line %d:\n  run 1: %s\n  run 2: %s", e.Index, e.LineA, e.LineB)
}

// CheckDeterminism runs the scenario twice with tracing on and returns a
// *DeterminismError naming the first event where the runs differ, if any.
func CheckDeterminism(s Scenario) (uint64, error) {
	s.Trace = true
	a, err := Run(s)
	if err != nil {
		return 0, err
	}
	b, err := Run(s)
	if err != nil {
		return 0, err
	}
	if a.TraceHash == b.TraceHash {
		return a.TraceHash, nil
	}
	line := func(r Result, i int) string {
		if i >= len(r.Trace) {
			return "<end>"
		}
		t := r.Trace[i]
		return fmtTime(t.Time) + " " + t.What
	}
	n := max(len(a.Trace), len(b.Trace))
	for i := 0; i < n; i++ {
		if la, lb := line(a, i), line(b, i); la != lb {
			return 0, &DeterminismError{a.TraceHash, b.TraceHash, i, la, lb}
		}
	}
	return 0, &DeterminismError{a.TraceHash, b.TraceHash, -1, "", ""}
}
