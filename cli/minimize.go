package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// minimizeFlags are minimize's flags: what to keep, how hard to try, where
// to write, and isolation's.
type minimizeFlags struct {
	kind, out *string
	maxRuns   *int
	trace     *bool
	iso       isolationFlags
}

// register defines minimize's flags on f.
func (mf *minimizeFlags) register(f *cmdFlags) {
	mf.kind = f.String("kind", "", "violation kind to keep (default: the repro's first violation)")
	mf.maxRuns = f.Int("max-runs", 2000, "bound on the scenarios tried")
	mf.out = f.String("out", "", "directory for the minimal repro (default: FILE's directory)")
	mf.trace = f.Bool("trace", false, "print the minimal run's full timeline")
	mf.iso.register(f)
}

// input is what the arguments ask to minimise: the repro file's contents,
// the violation kind to keep and the isolation to run the candidates in,
// checked in the order the errors are reported.
func (mf *minimizeFlags) input(f *cmdFlags, pos []string) (explore.Repro, model.ViolationKind, *explore.Isolation, error) {
	if len(pos) != 1 {
		return explore.Repro{}, "", nil, fmt.Errorf("give exactly one repro file to minimise")
	}
	if err := checkMinimizeInput(f, pos[0], *mf.out, *mf.maxRuns); err != nil {
		return explore.Repro{}, "", nil, err
	}
	iso, err := mf.iso.isolation()
	if err != nil {
		return explore.Repro{}, "", nil, err
	}
	r, err := explore.ReadRepro(pos[0], variants.Lookup)
	if err != nil {
		return explore.Repro{}, "", nil, err
	}
	if r.Schedule != nil {
		return explore.Repro{}, "", nil, fmt.Errorf("%s is a schedule found by locksim explore, which has the fewest faults there are (%d): there is nothing to shrink; replay it with %s", pos[0], r.Schedule.Faults(), explore.ReplayFileCommand(pos[0]))
	}
	k, err := kindToKeep(r, *mf.kind)
	if err != nil {
		return explore.Repro{}, "", nil, err
	}
	if k.IsProcessDeath() && iso == nil {
		return explore.Repro{}, "", nil, fmt.Errorf("cannot minimise a %s finding: minimize runs its candidates in this process, which the %s would take down; replay %s shows it in a worker", k, k, pos[0])
	}
	return r, k, iso, nil
}

func minimizeCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("minimize", "locksim minimize FILE [-kind KIND] [-max-runs N] [-out DIR]",
		"Shrinks a repro's fault plan by delta debugging (explore.Minimize) while the same kind of\n"+
			"violation still occurs: drops timed faults, zeroes steady ones, weakens what is left,\n"+
			"cuts the run just after the violation and tries fewer clients and nodes. Writes the\n"+
			"minimal repro as VARIANT-seed-N-min.json next to FILE (or into -out), prints the sizes\n"+
			"before and after, its timeline and the command that replays it.\n"+
			"Exit 1: a minimal failing repro was written; 2: bad usage or input.",
		"locksim minimize repros/original-seed-2.json",
		"locksim minimize repros/corrected-seed-40.json -kind lost-update -max-runs 500")
	var mf minimizeFlags
	mf.register(f)
	pos, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	r, k, iso, err := mf.input(f, pos)
	if err != nil {
		return f.fail(stderr, err)
	}
	t := r.Target()
	fmt.Fprintf(stdout, "repro:   %s (recorded by %s)\n", pos[0], r.Version)
	describeTarget(stdout, t)
	fmt.Fprintf(stdout, "seed:    %d\nkeeping: %s\n", r.Seed, k)

	res, err := explore.MinimizeWith(t, r.Seed, r.Plan, k, explore.MinimizeOptions{MaxRuns: *mf.maxRuns, Isolate: iso})
	if code, ok := minimizeFinding(stdout, t.Variant.Name, pos[0], err); ok {
		return code
	}
	if err != nil {
		return f.fail(stderr, err)
	}
	return mf.report(f, t, res, pos[0], stdout, stderr)
}

// report writes the minimal repro of input, runs it once more for the
// timeline (minimisation keeps no history) and prints it with the line
// that replays it: exit 1, or 2 if it cannot be written or run.
func (mf *minimizeFlags) report(f *cmdFlags, t explore.Target, res explore.MinimizeResult, input string, stdout, stderr io.Writer) int {
	min := explore.NewRepro(res.Target, res.Outcome)
	min.Minimized = true
	path, err := writeMinimal(min, input, *mf.out)
	if err != nil {
		return f.fail(stderr, err)
	}
	// Minimize keeps no history; one more run gets it for the timeline.
	o, err := explore.Replay(min, explore.Options{Check: model.DefaultCheckOptions(), Keep: true})
	if err != nil {
		return f.fail(stderr, err)
	}
	printMinimized(stdout, t, res)
	printPlan(stdout, o)
	printOutcome(stdout, o, t.Variant.Name)
	if err := printTimeline(stdout, o, *mf.trace); err != nil {
		return f.fail(stderr, err)
	}
	fmt.Fprintf(stdout, "minimal: %s\n", path)
	fmt.Fprintf(stdout, "replay:  %s\n", explore.ReplayFileCommand(path))
	return exitViolation
}

// writeMinimal writes the minimal repro of input into dir (default: the
// input's directory) and returns its path; it never writes over the input.
func writeMinimal(min explore.Repro, input, dir string) (string, error) {
	if dir == "" {
		dir = filepath.Dir(input)
	}
	path := explore.ReproPath(dir, min)
	for n := 2; sameFile(path, input); n++ {
		// Minimising a minimal repro: never write over the input.
		path = explore.ReproPath(dir, min)
		path = strings.TrimSuffix(path, ".json") + "-" + strconv.Itoa(n) + ".json"
	}
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = explore.WriteReproAt(path, min)
	}
	if err != nil {
		return "", fmt.Errorf("cannot write the minimal repro: %v", err)
	}
	return path, nil
}

// kindToKeep is the violation kind minimisation must preserve.
func kindToKeep(r explore.Repro, name string) (model.ViolationKind, error) {
	if name == "" {
		if r.Verdict.OK() {
			return "", fmt.Errorf("the repro records no violation to minimise")
		}
		return r.Verdict.Violations[0].Kind, nil
	}
	known := []model.ViolationKind{model.MutualExclusion, model.LostUpdate, model.DataLoss, model.Liveness, model.Leftover, model.Panic, model.Livelock}
	if !slices.Contains(known, model.ViolationKind(name)) {
		names := make([]string, len(known))
		for i, k := range known {
			names[i] = string(k)
		}
		return "", fmt.Errorf("unknown violation kind %q (known: %s)", name, strings.Join(names, ", "))
	}
	return model.ViolationKind(name), nil
}

// printMinimized says how much smaller the scenario became.
func printMinimized(w io.Writer, before explore.Target, res explore.MinimizeResult) {
	fmt.Fprintf(w, "minimised in %d runs: plan size %d → %d", res.Runs, res.SizeBefore, res.SizeAfter)
	b, a := before.Config, res.Target.Config
	num := func(name string, x, y int) {
		if x != y {
			fmt.Fprintf(w, ", %s %d → %d", name, x, y)
		}
	}
	dur := func(name string, x, y time.Duration) {
		if x != y {
			fmt.Fprintf(w, ", %s %s → %s", name, envelope.Span(x), envelope.Span(y))
		}
	}
	dur("duration", b.Duration, a.Duration)
	num("hosts", b.Hosts, a.Hosts)
	num("threads", b.ThreadsPerHost, a.ThreadsPerHost)
	num("nodes", b.Nodes, a.Nodes)
	num("replication", b.Replication, a.Replication)
	dur("ttl", b.TTL, a.TTL)
	dur("hold-max", b.HoldMax, a.HoldMax)
	dur("think-max", b.ThinkMax, a.ThinkMax)
	dur("latency-tail", b.LatencyTail, a.LatencyTail)
	if b.RestartingVersions != a.RestartingVersions {
		fmt.Fprintf(w, ", restarting versions → %v", a.RestartingVersions)
	}
	fmt.Fprintln(w)
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
