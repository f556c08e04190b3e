package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/cause"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
)

// sweepAbout is sweep's -h text.
const sweepAbout = "Runs many seeds on every core. Each seed is deterministic; parallelism only spreads seeds\n" +
	"across cores, and results are reported in seed order whatever the core count. A seed\n" +
	"draws its faults from every class unless -faults says otherwise, inside the variant's\n" +
	"envelope (what it assumes of the world, see locksim variants -v) and up to its edges;\n" +
	"-beyond makes each seed break one or more of the named assumptions on purpose.\n" +
	"Every violation is judged from what the run did: a bug of the variant (a promised\n" +
	"property broke inside the envelope) fails the sweep; one that came only after an\n" +
	"assumption broke is reported as expected, naming the assumption, when and by which\n" +
	"fault; one of a property the variant does not promise is counted. With -strict every\n" +
	"violation fails. Each seed draws its world too (-world; a scenario flag pins a field).\n" +
	"Liveness is judged while faults are active: waiters must be granted within -liveness-bound\n" +
	"of time with a majority of the key's nodes up and reachable, and no lock item may stay\n" +
	"behind unused for longer. Stops at the first safety failure unless -keep-going (-stop-on\n" +
	"any: at the first failure of any kind). Writes a repro file per\n" +
	"failure into -out and prints the command that replays it. Seeds run in worker processes\n" +
	"(-isolate): a seed that crashes its worker, hangs past -hang-after or passes -memory-limit\n" +
	"is a finding (crash, hang, memory) and the sweep goes on. Seeds are never listed, so any\n" +
	"range runs in constant memory (-n 1T, -n forever). The sweep journals its progress into\n" +
	"-out: Ctrl-C stops at once and prints the summary so far (and the JSON, with -json); killed\n" +
	"or interrupted, the same command with -resume runs only the rest and prints what the\n" +
	"uninterrupted sweep prints. Exit 0: no failure; 1: failures; 2: bad usage; 130:\n" +
	"interrupted without a failure.\n" +
	"-shard K/N runs every N-th seed from offset K, for splitting a sweep across machines;\n" +
	"-shard env/N takes K from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job sets it).\n" +
	"locksim merge combines the shards' -json outputs into one result; give every shard\n" +
	"-keep-going, or each stops at its own first violation (see docs/SCALING.md)."

var sweepExamples = []string{
	"locksim sweep -variant original -n 200",
	"locksim sweep -variant corrected -seeds 1000..1999 -keep-going -out repros",
	"locksim sweep -variant corrected -beyond all -n 2000 -keep-going   # what breaking each assumption costs",
	"locksim sweep -variant original -faults skew -beyond clock-error -strict -n 200",
	"locksim sweep -variant fenced -faults crash,pause -n 10000 -keep-going -shard 0/4 -json > shard-0.json   # one machine of four",
	"locksim sweep -variant original -faults threads -n 50 -json",
	"locksim sweep -variant original -keep-going -n 10000   # every bug of the post, BUGS.md",
}

// sweepFlags are sweep's own flags, besides the scenario's and isolation's.
type sweepFlags struct {
	sc                        scenarioFlags
	iso                       isolationFlags
	seeds, count, out         *string
	stopOn, shard             *string
	parallel, whyMax          *int
	keepGoing, asJSON, resume *bool
	why                       *bool
}

func (sf *sweepFlags) register(f *cmdFlags) {
	sf.sc.register(f)
	sf.seeds = f.String("seeds", "", "inclusive seed range FROM..TO, or FROM.. with -n COUNT seeds (default 1..COUNT)")
	sf.count = f.String("n", strconv.Itoa(explore.DefaultSweepSeeds), "number of seeds, from seed 1 (or use -seeds): a number up to 100000000, one with a unit (10k, 5M, 2G, 1T), or forever (until Ctrl-C)")
	sf.parallel = f.Int("parallel", 0, "workers (0: every core)")
	sf.out = f.String("out", defaultReproDir, "directory for the repro files of failures")
	sf.keepGoing = f.Bool("keep-going", false, "run every seed and collect all failures")
	sf.stopOn = f.String("stop-on", "safety", "without -keep-going, the failure that stops the sweep: safety (the first that is not only liveness, counting the liveness failures before it) or any")
	sf.shard = f.String("shard", "", "run only shard K/N of the seeds (0 <= K < N), for splitting across machines; env/N reads K from $JOB_COMPLETION_INDEX")
	sf.asJSON = f.Bool("json", false, "print a machine-readable summary as JSON on stdout")
	sf.why = f.Bool("why", true, "with -keep-going, attribute failing seeds to their causes by counterfactual replay (as replay -why does one), and print them grouped by cause; -why=false skips it")
	sf.whyMax = f.Int("why-max", 200, "with -why, attribute at most this many failing seeds, the first ones")
	sf.resume = f.Bool("resume", false, "continue the sweep with these flags from its journal in -out, after it was killed or interrupted: only the seeds it had not finished run, and the summary is the uninterrupted sweep's")
	sf.iso.register(f)
}

// options are the target and the sweep the flags ask for.
func (sf *sweepFlags) options(f *cmdFlags) (explore.Target, explore.SweepOptions, error) {
	var o explore.SweepOptions
	iso, err := sf.iso.isolation()
	if err != nil {
		return explore.Target{}, o, err
	}
	t, run, err := sf.sc.checked(f)
	if err != nil {
		return t, o, err
	}
	stop, err := explore.ParseStopPolicy(*sf.stopOn)
	if err != nil {
		return t, o, fmt.Errorf("-%v", err)
	}
	count, err := parseCount(*sf.count)
	if err != nil {
		return t, o, err
	}
	o = explore.SweepOptions{Parallel: *sf.parallel, KeepGoing: *sf.keepGoing, StopOn: stop, Run: run, Isolate: iso}
	if o.From, o.Count, err = seedsFrom(f, *sf.seeds, count); err != nil {
		return t, o, err
	}
	if err := sf.checkCounts(o); err != nil {
		return t, o, err
	}
	switch {
	case *sf.resume && *sf.out == "":
		return t, o, fmt.Errorf("-resume reads the sweep's journal in -out: give -out")
	}
	if *sf.shard != "" {
		if o.ShardIndex, o.ShardCount, err = parseShard(*sf.shard); err != nil {
			return t, o, err
		}
	}
	return t, o, nil
}

// checkCounts checks the sweep's numbers: its seeds, -parallel, -why-max.
func (sf *sweepFlags) checkCounts(o explore.SweepOptions) error {
	if *sf.whyMax < 0 {
		return fmt.Errorf("-why-max %d is negative: give how many failing seeds -why attributes, or -why=false", *sf.whyMax)
	}
	return cmp.Or(checkSeeds(o.From, o.Count), checkParallel(*sf.parallel))
}

// prepareOut checks -out before the first seed and, with it, sets up the
// journal there. It reports whether it made the directory.
func (sf *sweepFlags) prepareOut(t explore.Target, o *explore.SweepOptions) (made bool, err error) {
	out := *sf.out
	if out == "" {
		return false, nil
	}
	if err := checkWritable(out); err != nil {
		return false, fmt.Errorf("-out %s cannot hold repro files: %v", out, err)
	}
	_, statErr := os.Stat(out)
	made = errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return false, fmt.Errorf("-out %s cannot hold the sweep's journal: %v", out, err)
	}
	o.Journal, o.Resume = explore.JournalPath(out, t, *o), *sf.resume
	return made, nil
}

func sweepCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("sweep", "locksim sweep [-variant NAME] [-seeds FROM..TO | -n COUNT] [-faults CLASS,...] [-beyond ASSUMPTION,...|all] [-strict] [-parallel N] [-out DIR] [-resume] [scenario flags]",
		sweepAbout, sweepExamples...)
	var sf sweepFlags
	sf.register(f)
	if code, done := f.parseNone(args, stdout, stderr); done {
		return code
	}
	t, opts, err := sf.options(f)
	if err != nil {
		return f.fail(stderr, err)
	}
	madeOut, err := sf.prepareOut(t, &opts)
	if err != nil {
		return f.fail(stderr, err)
	}
	head := stdout
	if *sf.asJSON {
		head = stderr
	}
	describeTarget(head, t)
	fmt.Fprintf(head, "seeds:   %s\n", opts.DescribeSeeds())

	rep := newSweepReport(&sf, t, opts, stdout, stderr)
	opts.OnOutcome = rep.outcome
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	opts.Stop = ctx.Done()
	res, err := explore.Sweep(t, opts)
	cancel() // a second Ctrl-C from here on kills the process, as usual
	rep.prog.clear()
	if err != nil {
		return f.fail(stderr, err)
	}
	if !res.Interrupted && opts.Journal != "" {
		// A sweep that ended has nothing to resume: no journal stays behind.
		os.Remove(opts.Journal)
		if madeOut {
			os.Remove(*sf.out) // only if nothing else was written there
		}
	}
	if err := rep.finish(res, args); err != nil {
		return f.fail(stderr, err)
	}
	switch {
	case rep.saveErr != nil:
		return f.fail(stderr, fmt.Errorf("%v (the findings are printed above)", rep.saveErr))
	case res.Failed > 0:
		return exitViolation
	case res.Interrupted:
		return exitInterrupted
	}
	return exitOK
}

// sweepReport prints a sweep as it goes and at its end, or its JSON.
type sweepReport struct {
	sf              *sweepFlags
	t               explore.Target
	opts            explore.SweepOptions
	stdout, stderr  io.Writer
	prog            *progress
	json            explore.SweepReport
	saveErr         error
	printedExpected int
}

func newSweepReport(sf *sweepFlags, t explore.Target, opts explore.SweepOptions, stdout, stderr io.Writer) *sweepReport {
	return &sweepReport{sf: sf, t: t, opts: opts, stdout: stdout, stderr: stderr, prog: newProgress(stderr, opts.Len()),
		json: explore.NewSweepReport(t, sf.sc.strict, opts)}
}

// outcome sees each outcome in seed order: progress, the first expected
// ones, and every failure with its repro file.
func (r *sweepReport) outcome(o explore.Outcome) {
	r.prog.seen(o.Failed())
	asJSON := *r.sf.asJSON
	if !o.Failed() {
		if o.Expected() {
			if r.printedExpected++; r.printedExpected <= maxExpectedPrinted && !asJSON {
				r.prog.clear()
				printExpected(r.stdout, o, r.t, r.sf.sc.replayCommand(r.t, o.Seed))
			}
		}
		return
	}
	replay, path, err := r.sf.sc.saveFailure(r.t, o, *r.sf.out)
	if err != nil && r.saveErr == nil {
		// Keep going and keep the finding: it is printed, without its file.
		r.saveErr = fmt.Errorf("cannot write the repro file for seed %d: %v", o.Seed, err)
	}
	fj := explore.NewFailureReport(o, r.t, replay, path)
	if asJSON {
		r.json.Failures = append(r.json.Failures, fj) // the JSON lists them all
	} else {
		r.prog.clear()
		printFailure(r.stdout, fj, r.t.Variant.Name) // streamed: a long sweep holds none of them
	}
}

// finish prints the summary (or the JSON) and, if interrupted, how to resume.
func (r *sweepReport) finish(res explore.SweepResult, args []string) error {
	j := &r.json
	j.Count(res)
	if res.Interrupted {
		j.Interrupted, j.Resume = true, resumeCommand(args, r.opts, res.NextSeed)
		if r.opts.Journal != "" {
			j.Resume = journalResumeCommand(args)
		}
	}
	if *r.sf.asJSON {
		if err := writeJSON(r.stdout, *j); err != nil {
			return err
		}
	} else {
		printSweepSummary(r.stdout, res, r.opts.Len(), r.prog, j.ExpectedBy, r.opts.StopOn)
		if err := r.causes(res); err != nil {
			return err
		}
	}
	if res.Interrupted {
		fmt.Fprintf(r.stderr, "sweep: interrupted before seed %d; resume with:\n  %s\n", res.NextSeed, j.Resume)
	}
	return nil
}

// causes attributes the sweep's failing seeds (-why, with -keep-going)
// and prints them grouped by cause.
func (r *sweepReport) causes(res explore.SweepResult) error {
	n := min(*r.sf.whyMax, len(res.Failures))
	if !*r.sf.why {
		n = 0
	}
	if !*r.sf.keepGoing || n <= 0 || r.t.Runner != nil {
		return nil
	}
	fmt.Fprintf(r.stderr, "sweep: attributing %d failing seeds by counterfactual replay (-why=false skips it)...\n", n)
	as, err := cause.AttributeAll(r.t, res.Failures[:n], cause.Options{Run: r.opts.Run})
	if err != nil {
		return fmt.Errorf("attributing the failures: %v", err)
	}
	stuck := func(seed uint64) string {
		opt := r.opts.Run
		opt.Keep = true
		o, err := explore.RunSeed(r.t, seed, opt)
		if err != nil {
			return ""
		}
		for _, f := range o.Findings {
			if f.Kind == model.Liveness {
				return o.Stuck(f)
			}
		}
		return ""
	}
	printCauses(r.stdout, as, len(res.Failures), func(seed uint64) string { return r.sf.sc.replayCommand(r.t, seed) }, stuck)
	return nil
}

// exitInterrupted is a sweep stopped by Ctrl-C before it found a failure.
const exitInterrupted = 130

// resumeCommand is the sweep command that runs the seeds an interrupted
// sweep did not: args without their seed range, and the seeds from next to
// the range's end (of a shard K/N: every N-th from next, shard 0/N).
func resumeCommand(args []string, o explore.SweepOptions, next uint64) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		name := strings.TrimLeft(args[i], "-")
		base, _, hasValue := strings.Cut(name, "=")
		switch base {
		case "n", "seeds", "shard":
			if !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		kept = append(kept, args[i])
	}
	last := o.From + uint64(o.Count) - 1
	kept = append(kept, fmt.Sprintf("-seeds %d..%d", next, last))
	if o.ShardCount > 0 {
		kept = append(kept, fmt.Sprintf("-shard 0/%d", o.ShardCount))
	}
	return seedrun.CommandPrefix + " sweep " + strings.Join(kept, " ")
}

// printFailure is one failing seed: its violations, repro file and replay
// command. locksim merge prints the failures it reads the same way.
func printFailure(w io.Writer, f explore.FailureReport, variant string) {
	fmt.Fprintf(w, "FAIL seed %d:\n", f.Seed)
	if f.World != "" {
		fmt.Fprintf(w, "  world:  %s\n", f.World)
	}
	for _, x := range f.Findings {
		fmt.Fprintf(w, "  %s at %s: %s\n", x.Kind, model.Seconds(x.Time), x.Story)
		if note := x.Note(variant); note != "" {
			fmt.Fprintf(w, "    %s\n", note)
		}
	}
	if f.Repro != "" {
		fmt.Fprintf(w, "  repro:  %s\n", f.Repro)
	}
	fmt.Fprintf(w, "  replay: %s\n", f.Replay)
}

func printSweepSummary(w io.Writer, res explore.SweepResult, total int, p *progress, expectedBy []explore.BreachCount, stop explore.StopPolicy) {
	now := time.Now()
	stopped := ""
	switch {
	case res.Interrupted:
		stopped = fmt.Sprintf(" (interrupted; %d not run)", total-res.Runs)
	case res.Runs < total && stop == explore.StopOnSafety:
		stopped = fmt.Sprintf(" (stopped at the first safety failure, after %d liveness failures; -keep-going runs the other %d)",
			res.LivenessFailed, total-res.Runs)
	case res.Runs < total:
		stopped = fmt.Sprintf(" (stopped at the first failure; -keep-going runs the other %d)", total-res.Runs)
	}
	failing := fmt.Sprintf("%d failing", res.Failed)
	if res.LivenessFailed > 0 {
		failing += fmt.Sprintf(" (%d of liveness only)", res.LivenessFailed)
	}
	fmt.Fprintf(w, "sweep: %d of %d seeds run%s, %s, %s, %.0f seeds/s\n",
		res.Runs, total, stopped, failing, now.Sub(p.start).Round(time.Millisecond), p.rate(now))
	fmt.Fprintf(w, "       %d inside the envelope, %s, %d broke only what the variant does not promise\n",
		res.Inside, describeExpected(res.Expected, expectedBy), res.Unpromised)
}

// describeExpected is "3 expected (outside the envelope: use-within-validity 2, clock-jumps 1)".
func describeExpected(n int, by []explore.BreachCount) string {
	if n == 0 {
		return "0 expected"
	}
	parts := make([]string, len(by))
	for i, b := range by {
		parts[i] = fmt.Sprintf("%s %d", b.Assumption, b.Seeds)
	}
	return fmt.Sprintf("%d expected (outside the envelope: %s)", n, strings.Join(parts, ", "))
}

// maxExpectedPrinted bounds the expected seeds a sweep prints one line for;
// the summary counts them all.
const maxExpectedPrinted = 5

// journalResumeCommand is the command that resumes an interrupted or killed
// sweep from its journal: the same flags, and -resume.
func journalResumeCommand(args []string) string {
	kept := []string{}
	for _, a := range args {
		if base, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); base != "resume" {
			kept = append(kept, a)
		}
	}
	return seedrun.CommandPrefix + " sweep " + strings.Join(append(kept, "-resume"), " ")
}

// printExpected is one line for a seed whose violations came only outside
// the envelope.
func printExpected(w io.Writer, o explore.Outcome, t explore.Target, replay string) {
	for _, f := range o.Findings {
		if f.Promised && f.Breach != nil {
			fmt.Fprintf(w, "expected, seed %d: %s at %s, after %s\n", o.Seed, f.Kind, model.Seconds(f.Time), f.Breach)
			if len(t.World) > 0 {
				fmt.Fprintf(w, "  world:  %s\n", envelope.DescribeWorld(o.Config, t.World))
			}
			fmt.Fprintf(w, "  replay: %s\n", replay)
			return
		}
	}
}

// parseSeedRange reads FROM..TO, inclusive.
func parseSeedRange(s string) (from uint64, count int, err error) {
	bad := fmt.Errorf("bad -seeds range %q: want FROM..TO with 0 <= FROM <= TO, e.g. 1..1000, or FROM.. with -n COUNT", s)
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		if _, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64); err == nil {
			return 0, 0, fmt.Errorf("-seeds %s is not a range: -seeds takes FROM..TO (or FROM.. with -n), and -n %s gives seeds 1..%s", s, s, s)
		}
		return 0, 0, bad
	}
	from, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	if err1 != nil {
		return 0, 0, bad
	}
	if strings.TrimSpace(b) == "" {
		return from, openRange, nil
	}
	to, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
	if err2 != nil || to < from {
		return 0, 0, bad
	}
	if to-from >= maxBareCount {
		return 0, 0, fmt.Errorf("-seeds %s is more than %d seeds, days of work: if you mean it, give -seeds FROM.. with -n and a unit (-n 1T)", s, maxBareCount)
	}
	return from, int(to-from) + 1, nil
}

// openRange is the count of a -seeds FROM.. range: -n says how many.
const openRange = -1

// seedsFrom is where -seeds and -n put a sweep's seeds: FROM..TO, or
// FROM.. with -n's count, or -n's count from seed 1.
func seedsFrom(f *cmdFlags, seeds string, count int) (from uint64, n int, err error) {
	if seeds == "" {
		return 1, count, nil
	}
	from, n, err = parseSeedRange(seeds)
	switch {
	case err != nil:
		return 0, 0, err
	case n == openRange:
		return from, count, nil
	case f.set("n"):
		return 0, 0, fmt.Errorf("-seeds %s already says how many seeds: give -n only with an open range (-seeds %d..)", seeds, from)
	}
	return from, n, nil
}

// maxBareCount is the most seeds -n takes as a bare number: more is likely
// a typo (10^12 seeds is years of work on two cores), so it takes a unit.
const maxBareCount = 100_000_000

// forever is the count of -n forever: a sweep that runs until interrupted.
const forever = explore.Forever

// countUnits are -n's units; sizes are int64 so that a 32-bit build
// compiles (there, -n 1T is more than a sweep can count, and says so).
var countUnits = []struct {
	suffix string
	size   int64
}{{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}

// parseCount reads -n: a number up to maxBareCount, a number with a unit,
// or forever.
func parseCount(s string) (int, error) {
	if s == "forever" {
		return forever, nil
	}
	size, num := int64(1), s
	for _, u := range countUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			size, num = u.size, n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("-n %q is not a count of seeds: give a number such as 1000, one with a unit (10k, 5M, 2G, 1T), or forever", s)
	case size == 1 && n > maxBareCount:
		return 0, fmt.Errorf("-n %d is more than %d seeds, days of work: if you mean it, give a unit (-n %s) or -n forever, which runs until Ctrl-C", n, maxBareCount, withUnit(n))
	case n > int64(forever)/size:
		return 0, fmt.Errorf("-n %s is more seeds than a sweep can count: give -n forever", s)
	}
	return int(n * size), nil
}

// withUnit writes n with the largest unit that divides it.
func withUnit(n int64) string {
	for i := len(countUnits) - 1; i >= 0; i-- {
		if u := int64(countUnits[i].size); n%u == 0 {
			return strconv.FormatInt(n/u, 10) + countUnits[i].suffix
		}
	}
	return strconv.FormatInt(n, 10)
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

// checkWritable checks, before the first seed runs, that repro files can
// be written into dir: it or its nearest existing parent is a directory a
// file can be created in. It creates nothing that stays: a sweep without
// failures leaves no directory behind.
func checkWritable(dir string) error {
	at := dir
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", at)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		parent := filepath.Dir(at)
		if parent == at {
			return err
		}
		at = parent
	}
	f, err := os.CreateTemp(at, ".locksim-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
