// Package locksimtest breaks your own lock from your own module's go test.
// Write the lock against package algorithm, state what it assumes of the
// world in its Envelope, and call Check from a test:
//
//	func TestMyLock(t *testing.T) {
//		locksimtest.Check(t, mylock.Variant(), locksimtest.Faults("all"), locksimtest.Seeds(2000))
//	}
//
// Check sweeps the seeds on every core, each in a worker process (a lock
// that spins, crashes or eats memory is a finding, not a dead test), each
// seed drawing a world and a fault plan inside the lock's envelope. On the
// first bug it shrinks the failure to its smallest world and fault
// schedule (within a bound of runs; -locksim.minimize=false skips it) and
// fails the test with the verdict in words (and, for a wait, why nobody
// got the lock), the timeline around the violation, and the commands that
// replay it:
//
//	go test -run '^TestMyLock$' -locksim.replay=testdata/locksim/TestMyLock/mylock-seed-17-min.json
//	go test -run '^TestMyLock$' -locksim.seed=17
//
// The repro file is kept under testdata/locksim/<test name>/, as rapid
// keeps its fail files: every later go test of the test replays the
// failures kept there first, and fails while one still fails, so that a
// fixed bug stays fixed. Commit them with the test. With -short, Check
// sweeps a tenth of its seeds; -locksim.trace shows the whole timeline of
// a failure, -locksim.html=FILE writes its timeline page (and porcupine's
// beside it, FILE-porcupine.html).
//
// A lock built on a real Redis client instead (redsync, bsm/redislock,
// your own go-redis code) needs no rewrite: CheckRedis runs it unmodified
// against simulated Redis nodes, each seed in a testing/synctest bubble
// whose coordinator is locksim, with the same report and replay lines.
package locksimtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/cause"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
)

var (
	replayFlag   = flag.String("locksim.replay", "", "Check replays this repro file (written by a failing Check) instead of sweeping")
	seedFlag     = flag.Uint64("locksim.seed", 0, "Check runs only this seed of its sweep (0: sweep)")
	minimizeFlag = flag.Bool("locksim.minimize", true, "Check shrinks the failure it finds to its smallest world and fault schedule, within a bound of runs (-locksim.minimize=false: report it as found)")
	seedsFlag    = flag.Int("locksim.seeds", 0, "seeds each Check sweeps (0: its Seeds option)")
	traceFlag    = flag.Bool("locksim.trace", false, "a failure's report shows the whole timeline, not only the part around the violation")
	htmlFlag     = flag.String("locksim.html", "", "a failure's report also writes the run's timeline page to this file, and porcupine's beside it (as locksim replay -html)")
	faultsFlag   = flag.String("locksim.faults", "", "fault classes each Check sweeps, comma-separated as locksim sweep -faults takes them (empty: its Faults option)")
)

// classesOf is the fault classes a check sweeps: -locksim.faults, or its
// Faults option.
func classesOf(s settings) ([]faults.Class, error) {
	if *faultsFlag != "" {
		cs, err := faults.ParseClasses(*faultsFlag)
		if err != nil {
			return nil, fmt.Errorf("-locksim.faults: %v", err)
		}
		return cs, nil
	}
	cs, err := faults.ParseClasses(s.classes)
	if err != nil {
		return nil, fmt.Errorf("locksimtest.Faults: %v", err)
	}
	return cs, nil
}

// DefaultSeeds is how many seeds Check sweeps without Seeds: the CLI's
// default sweep, twice, a few seconds on two cores for a lock like the
// post's.
const DefaultSeeds = 2 * explore.DefaultSweepSeeds

// Option changes what Check sweeps.
type Option func(*settings)

type settings struct {
	classes   string
	seeds     int
	config    *sim.Config
	inProcess bool
	iso       explore.Isolation // budgets of the workers
	err       error
	// CheckRedis's
	name         string
	envelope     *algorithm.Envelope
	redisOptions func(*redis.Options)
	retry        *RetryPromise
}

// Faults names the fault classes each seed draws from, comma-separated,
// as locksim sweep -faults takes them ("all" by default; "none" for a
// fault-free world).
func Faults(classes string) Option { return func(s *settings) { s.classes = classes } }

// Seeds is how many seeds Check sweeps (DefaultSeeds by default).
func Seeds(n int) Option {
	return func(s *settings) {
		if n <= 0 {
			s.err = fmt.Errorf("locksimtest.Seeds(%d): give a positive number of seeds", n)
		}
		s.seeds = n
	}
}

// Config is the world the seeds start from (sim.DefaultConfig by
// default); each seed still draws the fields its fault classes need.
func Config(c sim.Config) Option { return func(s *settings) { s.config = &c } }

// InProcess runs the seeds in the test's own process: faster to start,
// but a lock that spins or crashes takes the test binary with it.
func InProcess() Option { return func(s *settings) { s.inProcess = true } }

// HangAfter is how long a seed may run in its worker process before it is
// a hang finding (explore.DefaultHangAfter by default).
func HangAfter(d time.Duration) Option { return func(s *settings) { s.iso.HangAfter = d } }

// MemoryLimit is the heap in bytes a worker process may hold before its
// seed is a memory finding (explore.DefaultMemoryLimit by default).
func MemoryLimit(bytes int64) Option { return func(s *settings) { s.iso.MemoryLimit = bytes } }

// Check sweeps v and fails t on the first bug: a property v promises,
// broken inside its envelope. See the package documentation.
func Check(t *testing.T, v algorithm.Variant, opts ...Option) {
	t.Helper()
	s := settings{classes: "all", seeds: DefaultSeeds}
	for _, o := range opts {
		o(&s)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	classes, err := classesOf(s)
	if err != nil {
		t.Fatal(err)
	}
	target := explore.DefaultTarget(v, classes...)
	if s.config != nil {
		target.Config = *s.config
	}
	if err := target.Validate(); err != nil {
		t.Fatalf("locksimtest: %v", err)
	}
	var iso *explore.Isolation
	if !s.inProcess {
		iso = &s.iso
		iso.Command = explore.TestWorkerCommand(t.Name())
	}
	checkTarget(t, target, s, iso)
}

// checkTarget is Check's and CheckRedis's: replay a file, run a seed, or
// sweep.
func checkTarget(t *testing.T, target explore.Target, s settings, iso *explore.Isolation) {
	t.Helper()
	switch {
	case *replayFlag != "":
		replay(t, target, *replayFlag, iso)
	case *seedFlag != 0:
		o, err := runOne(target, *seedFlag, nil, iso)
		if err != nil {
			t.Fatal(err)
		}
		o = confirmed(target, o)
		reportWith(t, target, o, fmt.Sprintf("seed %d", o.Seed), "", iso)
	default:
		replayKept(t, target, iso)
		sweep(t, target, s, iso)
	}
}

func sweep(t *testing.T, target explore.Target, s settings, iso *explore.Isolation) {
	t.Helper()
	n := s.seeds
	if *seedsFlag > 0 {
		n = *seedsFlag
	}
	if testing.Short() {
		n = max(1, n/10)
	}
	res, err := explore.Sweep(target, explore.SweepOptions{From: 1, Count: n, Isolate: iso})
	if err != nil {
		t.Fatal(err)
	}
	if explore.IsWorker() {
		return // this process served another's seeds
	}
	if res.Failed == 0 {
		t.Logf("locksim: %s: no bug in %d seeds (%d inside the envelope; %d outside it, %d of them with an expected violation; %d broke only what it does not promise)",
			target.Variant.Name, res.Runs, res.Inside, res.Runs-res.Inside, res.Expected, res.Unpromised)
		return
	}
	f := res.Failures[0]
	if len(f.History.Clients) == 0 {
		// A sweep keeps no history: the seed runs again here for the
		// timeline (it ran to its end in its worker, so it ends here too),
		// and must be the same run, or it is a finding of its own.
		f = confirmed(target, f)
	}
	reportWith(t, target, f, fmt.Sprintf("seed %d, the first failing seed of a sweep of %d", f.Seed, n), "", iso)
}

// runOne runs one seed with its history, in a worker unless iso is nil.
func runOne(target explore.Target, seed uint64, plan *faults.Plan, iso *explore.Isolation) (explore.Outcome, error) {
	opt := explore.DefaultOptions()
	opt.Keep = true
	return explore.Run(target, seed, plan, opt, iso)
}

func replay(t *testing.T, target explore.Target, path string, iso *explore.Isolation) {
	t.Helper()
	o, rt, err := replayFile(t, target, path, iso)
	if err != nil {
		t.Fatalf("locksim.replay %v", err)
	}
	report(t, rt, o, "replay of "+path, path)
}

// replayFile runs the repro at path of target's variant, in target's
// runner, and logs whether it is the run recorded.
func replayFile(t *testing.T, target explore.Target, path string, iso *explore.Isolation) (explore.Outcome, explore.Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return explore.Outcome{}, target, err
	}
	r, err := explore.DecodeReproFor(data, target.Variant)
	if err != nil {
		return explore.Outcome{}, target, fmt.Errorf("%s: %v", path, err)
	}
	rt := r.Target()
	rt.Runner = target.Runner
	opt := explore.DefaultOptions()
	opt.Keep, opt.Check, opt.Schedule = true, r.CheckOptions(), r.Schedule
	if r.Schedule != nil {
		iso = nil // an explored schedule ran in process; it replays there
	}
	o, err := explore.Run(rt, r.Seed, &r.Plan, opt, iso)
	if err != nil {
		return explore.Outcome{}, rt, err
	}
	same := fmt.Sprintf("%016x", o.Hash) == r.TraceHash
	t.Logf("locksim: replayed %s: trace hash %016x, recorded %s (%s)", path, o.Hash, r.TraceHash,
		map[bool]string{true: "the same run", false: "another run"}[same])
	if !same && r.Schedule == nil {
		// Another run than the one recorded: a change of the code, or a
		// lock that runs another way each time. A second run here tells.
		o = confirmed(rt, o)
	}
	return o, rt, nil
}

// confirmed is o (a run found elsewhere, or here) run again in this
// process with its history: the same run, or, when it ran another way, a
// nondeterminism finding (seedrun.Confirm). A run that took or may take its
// process down is not run here, nor one that followed a schedule.
func confirmed(target explore.Target, o explore.Outcome) explore.Outcome {
	if workerKind(o) || o.Schedule != nil || nondeterministic(o) {
		return o
	}
	opt := explore.DefaultOptions()
	opt.Keep, opt.Trace = true, true // the trace: each request and reply, for the timeline
	c, err := seedrun.Confirm(target, o, opt)
	if err != nil {
		return o
	}
	return c
}

// nondeterministic: o's first finding is that its seed did not replay.
func nondeterministic(o explore.Outcome) bool {
	return len(o.Findings) > 0 && o.Findings[0].Kind == model.Nondeterminism
}

// report fails t if o is a bug of the target's variant, with everything
// needed to see it, keep it, replay it and shrink it. kept is the file o
// was replayed from, if any: it is not written again.
func report(t *testing.T, target explore.Target, o explore.Outcome, which, kept string) {
	t.Helper()
	reportWith(t, target, o, which, kept, nil)
}

// reportWith is report, minimising in worker processes unless iso is nil.
func reportWith(t *testing.T, target explore.Target, o explore.Outcome, which, kept string, iso *explore.Isolation) {
	t.Helper()
	if !o.Failed() {
		t.Logf("locksim: %s: %s", which, o)
		return
	}
	seed, minimized := o.Seed, false
	if kept == "" && *minimizeFlag && !workerKind(o) && !nondeterministic(o) && o.Schedule == nil {
		if mt, mo, how, ok := minimizeFound(target, o, iso); ok {
			target, o, minimized, which = mt, mo, true, which+how
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "locksim: %s has a bug (%s)\n", target.Variant.Name, which)
	fmt.Fprintf(&b, "world: %s\n", envelope.DescribeWorld(o.Config.Under(o.RanPlan()), envelope.EveryWorldField))
	if fs := o.Plan.Faults(); len(fs) > 0 {
		fmt.Fprintf(&b, "plan:  %s (size %d)\n", strings.Join(fs, ", "), o.Plan.Size())
	} else {
		fmt.Fprintf(&b, "plan:  no faults\n")
	}
	fmt.Fprintf(&b, "%s\n", o)
	if why := causeOf(target, o); why != "" {
		fmt.Fprintf(&b, "cause: %s\n", why)
	}
	if len(o.History.Clients) > 0 {
		opt := reports.TimelineOptions{Around: 2 * time.Second, MaxLines: 60}
		if *traceFlag {
			opt = reports.TimelineOptions{}
			b.WriteString("timeline:\n")
		} else {
			b.WriteString("timeline around the first violation (-locksim.trace shows all of it):\n")
		}
		if target.Runner != nil {
			opt.Requests = requestsOf(target, o) // what each node was asked and answered
		}
		reports.Timeline(&b, o.History, o.RanPlan(), o.Verdict, opt)
		if *htmlFlag != "" {
			if err := writePage(*htmlFlag, target, o); err != nil {
				fmt.Fprintf(&b, "html:     not written: %v\n", err)
			} else {
				fmt.Fprintf(&b, "html:     %s (porcupine's: %s)\n", *htmlFlag, explore.PorcupinePath(*htmlFlag))
			}
		}
	}
	run := "go test -run '" + explore.TestRunPattern(t.Name()) + "'"
	if *faultsFlag != "" {
		run += " -locksim.faults=" + *faultsFlag
	}
	if dir, werr := os.Getwd(); werr == nil {
		run = "cd " + dir + " && " + run
	}
	path := kept
	if path == "" {
		r := explore.NewRepro(target, o)
		r.Minimized = minimized
		var err error
		if path, err = keep(t, r); err != nil {
			fmt.Fprintf(&b, "repro:    not kept: %v\n", err)
		} else {
			fmt.Fprintf(&b, "repro:    %s (kept: every later go test of %s replays it first)\n", path, t.Name())
		}
	}
	if path != "" {
		fmt.Fprintf(&b, "replay:   %s -locksim.replay=%s\n", run, path)
	}
	if kept == "" && o.Schedule == nil {
		what := "the seed"
		if minimized {
			what = "the seed as found, before minimising"
		}
		fmt.Fprintf(&b, "replay:   %s -locksim.seed=%d   (%s)\n", run, seed, what)
	}
	if !minimized && kept == "" && o.Schedule == nil && !workerKind(o) && !nondeterministic(o) {
		fmt.Fprintf(&b, "minimise: %s -locksim.seed=%d -locksim.minimize\n", run, seed)
	}
	t.Fatal(strings.TrimRight(b.String(), "\n"))
}

// minimizeFound shrinks a failure found (its candidates in worker
// processes unless iso is nil), and returns the minimal run with its
// history, in its target, and how much it shrank; false if it did not.
func minimizeFound(target explore.Target, o explore.Outcome, iso *explore.Isolation) (explore.Target, explore.Outcome, string, bool) {
	// A lock on real clients keeps its world (its deployment): only the
	// plan and the run's length shrink.
	kind := o.Findings[0].Kind
	mo := explore.MinimizeOptions{MaxRuns: minimizeRuns, Isolate: iso, KeepWorld: target.Runner != nil}
	m, err := explore.MinimizeWith(target, o.Seed, o.Plan, kind, mo)
	if err != nil {
		return target, o, "", false
	}
	opt := explore.DefaultOptions()
	opt.Keep = true
	opt.Trace = target.Runner != nil // its requests, for the timeline (requestsOf), in this one run
	again, err := explore.RunPlan(m.Target, o.Seed, m.Outcome.Plan, opt)
	if err != nil || !again.Failed() || !bugOf(again, kind) {
		return target, o, "", false // the minimal run must show the same finding, a bug
	}
	return m.Target, again, fmt.Sprintf(", minimised from %d to %d faults in %d runs", m.SizeBefore, m.SizeAfter, m.Runs), true
}

// causeOf is what the failure needs, by counterfactual replay
// (sim/cause): the fixes of the variant's family that remove each
// violation, or, for a lock that declares none (every lock on real
// clients), the world changes (a fault, a world field) without which it
// does not occur. "" for a run that took or may take its process down, a
// nondeterministic one (its replays would say nothing), or one followed by
// a schedule.
func causeOf(target explore.Target, o explore.Outcome) string {
	if workerKind(o) || nondeterministic(o) || o.Schedule != nil || !o.Failed() {
		return ""
	}
	a, err := cause.Attribute(target, o, cause.Options{Run: explore.Options{Check: o.CheckOptions()}})
	if err != nil {
		return ""
	}
	return a.String()
}

// requestsOf is o's trace, for the requests its timeline shows: o's own,
// or, when o kept none (a replay, a minimised run), that of a traced run
// of it here, if that is the same run.
func requestsOf(target explore.Target, o explore.Outcome) []model.TraceEvent {
	if len(o.Trace) > 0 || workerKind(o) || o.Schedule != nil {
		return o.Trace
	}
	opt := explore.DefaultOptions()
	opt.Keep, opt.Trace = true, true
	tr, err := explore.RunPlan(target, o.Seed, o.Plan, opt)
	if err != nil || tr.Hash != o.Hash {
		return nil
	}
	return tr.Trace
}

// bugOf reports whether o has a bug of kind.
func bugOf(o explore.Outcome, kind model.ViolationKind) bool {
	for _, f := range o.Findings {
		if f.Kind == kind && f.Bug() {
			return true
		}
	}
	return false
}

// writePage writes o's timeline page to path, and porcupine's beside it.
func writePage(path string, target explore.Target, o explore.Outcome) error {
	info := reports.PageInfo{Variant: target.Variant.Name, Seed: o.Seed}
	if target.Runner != nil {
		info.Requests = requestsOf(target, o)
	}
	return explore.WritePages(path, o, "", info)
}

// minimizeRuns bounds the runs a failure's minimisation takes (a few
// seconds for a lock like the post's): deterministic, unlike a time limit.
const minimizeRuns = 300

// keptDir is where the failures of test name are kept for the next go
// test to replay first, as rapid keeps its fail files: relative to the
// package directory, where go test runs.
func keptDir(name string) string {
	return filepath.Join("testdata", "locksim", strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(name))
}

// keep writes r into t's kept failures and returns its path.
func keep(t *testing.T, r explore.Repro) (string, error) {
	dir := keptDir(t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return explore.WriteRepro(dir, r)
}

// replayKept replays every failure an earlier go test of t kept, first:
// one that fails again fails t (a regression); one that no longer fails
// is said to be fixed, and stays, so that it stays fixed.
func replayKept(t *testing.T, target explore.Target, iso *explore.Isolation) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(keptDir(t.Name()), "*.json"))
	if err != nil || len(files) == 0 {
		return
	}
	sort.Strings(files)
	for _, path := range files {
		o, r, err := replayFile(t, target, path, iso)
		if err != nil {
			t.Logf("locksim: kept failure %s not replayed: %v", path, err)
			continue
		}
		if o.Failed() {
			report(t, r, o, "a failure kept by an earlier run, "+path+", fails again", path)
			return
		}
		t.Logf("locksim: kept failure %s passes now: fixed (it stays, and is replayed first on every run)", path)
	}
}

// workerKind: a finding of a run that took its worker down, or may take
// this process down.
func workerKind(o explore.Outcome) bool {
	for _, v := range o.Verdict.Violations {
		if v.Kind.IsProcessDeath() {
			return true
		}
	}
	return false
}
