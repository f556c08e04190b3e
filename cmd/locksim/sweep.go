package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"locksim/faults"
	"locksim/model"
	"locksim/sim"
	"locksim/sim/explore"
)

// sweepJSON is what sweep -json prints.
type sweepJSON struct {
	Version  string        `json:"locksim_version"`
	Target   targetJSON    `json:"target"`
	Seeds    seedsJSON     `json:"seeds"`
	Runs     int           `json:"runs"`
	Events   int64         `json:"events"`
	Failures []failureJSON `json:"failures"`
}

type targetJSON struct {
	Variant string         `json:"variant"`
	Classes []faults.Class `json:"classes"`
	Config  sim.Config     `json:"config"`
}

type seedsJSON struct {
	From       uint64 `json:"from"`
	Count      int    `json:"count"`
	ShardIndex int    `json:"shard_index,omitempty"`
	ShardCount int    `json:"shard_count,omitempty"`
}

type failureJSON struct {
	Seed       uint64                `json:"seed"`
	Kinds      []model.ViolationKind `json:"kinds"`
	Violations []model.Violation     `json:"violations"` // so locksim merge prints what sweep prints
	Replay     string                `json:"replay"`
	Repro      string                `json:"repro"`
}

func sweepCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("sweep", "locksim sweep [-variant NAME] [-seeds FROM..TO | -n COUNT] [-faults CLASS,...] [-parallel N] [-out DIR] [scenario flags]",
		"Runs many seeds on every core. Each seed is deterministic; parallelism only spreads seeds\n"+
			"across cores, and results are reported in seed order whatever the core count. Stops at\n"+
			"the first violation unless -keep-going. Writes a repro file per failure into -out and\n"+
			"prints the command that replays it. Exit 0: no violation; 1: violations; 2: bad usage.\n"+
			"-shard K/N runs every N-th seed from offset K, for splitting a sweep across machines;\n"+
			"-shard env/N takes K from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job sets it).\n"+
			"locksim merge combines the shards' -json outputs into one result; give every shard\n"+
			"-keep-going, or each stops at its own first violation (see docs/SCALING.md).",
		"locksim sweep -variant original -faults skew -n 200",
		"locksim sweep -variant corrected -faults all -seeds 1000..1999 -keep-going -out repros",
		"locksim sweep -variant fenced -faults crash,pause -n 10000 -keep-going -shard 0/4 -json > shard-0.json   # one machine of four",
		"locksim sweep -variant original -faults threads -n 50 -json")
	var sc scenarioFlags
	sc.register(f)
	seeds := f.String("seeds", "", "inclusive seed range FROM..TO (default 1..COUNT)")
	count := f.Int("n", 100, "number of seeds, from seed 1 (or use -seeds)")
	parallel := f.Int("parallel", 0, "workers (0: every core)")
	out := f.String("out", "repros", "directory for the repro files of failures")
	keepGoing := f.Bool("keep-going", false, "run every seed and collect all failures")
	shard := f.String("shard", "", "run only shard K/N of the seeds (0 <= K < N), for splitting across machines; env/N reads K from $JOB_COMPLETION_INDEX")
	asJSON := f.Bool("json", false, "print a machine-readable summary as JSON on stdout")
	if code, done := f.parseNone(args, stdout, stderr); done {
		return code
	}
	t, err := sc.target(f)
	if err != nil {
		return f.fail(stderr, err)
	}
	opts := explore.SweepOptions{From: 1, Count: *count, Parallel: *parallel, KeepGoing: *keepGoing,
		Run: explore.DefaultOptions()}
	if f.set("seeds") && f.set("n") {
		return f.fail(stderr, fmt.Errorf("give -seeds or -n, not both"))
	}
	if *seeds != "" {
		if opts.From, opts.Count, err = parseSeedRange(*seeds); err != nil {
			return f.fail(stderr, err)
		}
	}
	if *count < 0 {
		return f.fail(stderr, fmt.Errorf("-n %d is negative", *count))
	}
	if *parallel < 0 {
		return f.fail(stderr, fmt.Errorf("-parallel %d is negative", *parallel))
	}
	if *shard != "" {
		if opts.ShardIndex, opts.ShardCount, err = parseShard(*shard); err != nil {
			return f.fail(stderr, err)
		}
	}

	head := stdout
	if *asJSON {
		head = stderr
	}
	describeTarget(head, t)
	fmt.Fprintf(head, "seeds:   %s\n", describeSeeds(opts))

	total := len(opts.Seeds())
	prog := newProgress(stderr, total)
	report := sweepJSON{Version: explore.Version, Target: targetJSON{t.Variant.Name, t.Classes, t.Config},
		Seeds:    seedsJSON{opts.From, opts.Count, opts.ShardIndex, opts.ShardCount},
		Failures: []failureJSON{}}
	var saveErr error
	opts.OnOutcome = func(o explore.Outcome) {
		prog.seen(o.Failed())
		if !o.Failed() || saveErr != nil {
			return
		}
		replay, path, err := saveFailure(t, o, *out)
		if err != nil {
			saveErr = fmt.Errorf("cannot write the repro file for seed %d: %v", o.Seed, err)
			return
		}
		fj := failureJSON{o.Seed, kinds(o.Verdict), o.Verdict.Violations, replay, path}
		if *asJSON {
			report.Failures = append(report.Failures, fj) // the JSON lists them all
		} else {
			prog.clear()
			printFailure(stdout, fj) // streamed: a long sweep holds none of them
		}
	}
	res, err := explore.Sweep(t, opts)
	prog.clear()
	if err != nil {
		return f.fail(stderr, err)
	}
	if saveErr != nil {
		return f.fail(stderr, saveErr)
	}
	report.Runs, report.Events = res.Runs, res.Events
	if *asJSON {
		if err := writeJSON(stdout, report); err != nil {
			return f.fail(stderr, err)
		}
	} else {
		printSweepSummary(stdout, res, total, prog)
	}
	if res.Failed > 0 {
		return exitViolation
	}
	return exitOK
}

// printFailure is one failing seed: its violations, repro file and replay
// command. locksim merge prints the failures it reads the same way.
func printFailure(w io.Writer, f failureJSON) {
	fmt.Fprintf(w, "FAIL seed %d:\n", f.Seed)
	for _, x := range f.Violations {
		fmt.Fprintf(w, "  %s at %s: %s\n", x.Kind, model.Seconds(x.Time), x.Story)
	}
	if f.Repro != "" {
		fmt.Fprintf(w, "  repro:  %s\n", f.Repro)
	}
	fmt.Fprintf(w, "  replay: %s\n", f.Replay)
}

func printSweepSummary(w io.Writer, res explore.SweepResult, total int, p *progress) {
	now := time.Now()
	stopped := ""
	if res.Runs < total {
		stopped = fmt.Sprintf(" (stopped at the first violation; -keep-going runs the other %d)", total-res.Runs)
	}
	fmt.Fprintf(w, "sweep: %d of %d seeds run%s, %d failing, %s, %.0f seeds/s\n",
		res.Runs, total, stopped, res.Failed, now.Sub(p.start).Round(time.Millisecond), p.rate(now))
}

func describeSeeds(o explore.SweepOptions) string {
	if o.Count == 0 {
		return "none"
	}
	s := fmt.Sprintf("%d..%d (%d)", o.From, o.From+uint64(o.Count)-1, o.Count)
	if o.ShardCount > 0 {
		s += fmt.Sprintf(", shard %d/%d (%d seeds)", o.ShardIndex, o.ShardCount, len(o.Seeds()))
	}
	if o.KeepGoing {
		s += ", keep going"
	}
	return s
}

// parseSeedRange reads FROM..TO, inclusive.
func parseSeedRange(s string) (from uint64, count int, err error) {
	bad := fmt.Errorf("bad -seeds range %q: want FROM..TO with 0 <= FROM <= TO, e.g. 1..1000", s)
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, bad
	}
	from, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	to, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil || to < from {
		return 0, 0, bad
	}
	if to-from >= math.MaxInt32 {
		return 0, 0, fmt.Errorf("bad -seeds range %q: more than %d seeds", s, math.MaxInt32)
	}
	return from, int(to-from) + 1, nil
}

// completionIndexVar is the environment variable a Kubernetes Indexed Job
// sets to each pod's index, 0..completions-1: -shard env/N reads K from it.
const completionIndexVar = "JOB_COMPLETION_INDEX"

// parseShard reads K/N with 0 <= K < N, or env/N with K in
// $JOB_COMPLETION_INDEX.
func parseShard(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	from := "" // where K came from, when not from s
	if ok && a == "env" {
		from = "$" + completionIndexVar
		if a, ok = os.LookupEnv(completionIndexVar); !ok {
			return 0, 0, fmt.Errorf("bad -shard %q: %s is not set (a Kubernetes Indexed Job sets it in each pod; elsewhere give -shard K/N)", s, from)
		}
	}
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case ok && err2 == nil && n >= 1 && from != "" && (err1 != nil || k < 0 || k >= n):
		return 0, 0, fmt.Errorf("bad -shard %q: %s is %q, want a shard index 0..%d", s, from, a, n-1)
	case !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n:
		return 0, 0, fmt.Errorf("bad -shard %q: want K/N with 0 <= K < N, e.g. 0/4, or env/N", s)
	}
	return k, n, nil
}
