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
	lines := func(r Result) []string {
		out := make([]string, len(r.Trace))
		for i, t := range r.Trace {
			out[i] = fmtTime(t.Time) + " " + t.What
		}
		return out
	}
	i, la, lb := FirstDifference(lines(a), lines(b))
	return 0, &DeterminismError{a.TraceHash, b.TraceHash, i, la, lb}
}

// FirstDifference is the first index at which two runs' lines differ, and
// the line of each there ("<end>" for the one that ended first); -1 and
// empty lines when they are the same.
func FirstDifference(a, b []string) (int, string, string) {
	for i := range max(len(a), len(b)) {
		x, y := "<end>", "<end>"
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return i, x, y
		}
	}
	return -1, "", ""
}
