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
// first bug it fails the test with the verdict in words, the timeline
// around the violation, a repro file in t.ArtifactDir (kept by go test
// -artifacts), and the command that replays it:
//
//	go test -run '^TestMyLock$' -locksim.seed=17
//	go test -run '^TestMyLock$' -locksim.replay=FILE
//
// -locksim.minimize shrinks the failure to its smallest world and fault
// schedule first. With -short, Check sweeps a tenth of its seeds.
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
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
)

var (
	replayFlag   = flag.String("locksim.replay", "", "Check replays this repro file (written by a failing Check) instead of sweeping")
	seedFlag     = flag.Uint64("locksim.seed", 0, "Check runs only this seed of its sweep (0: sweep)")
	minimizeFlag = flag.Bool("locksim.minimize", false, "Check shrinks the failure it finds (or replays) to its smallest world and fault schedule")
	seedsFlag    = flag.Int("locksim.seeds", 0, "seeds each Check sweeps (0: its Seeds option)")
)

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
	err       error
	// CheckRedis's
	name         string
	envelope     *algorithm.Envelope
	redisOptions func(*redis.Options)
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
	classes, err := faults.ParseClasses(s.classes)
	if err != nil {
		t.Fatalf("locksimtest.Faults: %v", err)
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
		iso = &explore.Isolation{Command: explore.TestWorkerCommand(t.Name())}
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
		report(t, target, o, fmt.Sprintf("seed %d", o.Seed))
	default:
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
		t.Logf("locksim: %s: no bug in %d seeds (%d inside the envelope, %d expected, %d broke only what it does not promise)",
			target.Variant.Name, res.Runs, res.Inside, res.Expected, res.Unpromised)
		return
	}
	f := res.Failures[0]
	if len(f.History.Clients) == 0 && !workerKind(f) {
		// A sweep keeps no history: the seed runs again here for the
		// timeline (it ran to its end in its worker, so it ends here too).
		opt := explore.DefaultOptions()
		opt.Keep = true
		if o, err := explore.RunPlan(target, f.Seed, f.Plan, opt); err == nil {
			f = o
		}
	}
	report(t, target, f, fmt.Sprintf("seed %d, the first failing seed of a sweep of %d", f.Seed, n))
}

// runOne runs one seed with its history, in a worker unless iso is nil.
func runOne(target explore.Target, seed uint64, plan *faults.Plan, iso *explore.Isolation) (explore.Outcome, error) {
	opt := explore.DefaultOptions()
	opt.Keep = true
	return explore.Run(target, seed, plan, opt, iso)
}

func replay(t *testing.T, target explore.Target, path string, iso *explore.Isolation) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("locksim.replay: %v", err)
	}
	r, err := explore.DecodeReproFor(data, target.Variant)
	if err != nil {
		t.Fatalf("locksim.replay %s: %v", path, err)
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
		t.Fatal(err)
	}
	same := fmt.Sprintf("%016x", o.Hash) == r.TraceHash
	t.Logf("locksim: replayed %s: trace hash %016x, recorded %s (%s)", path, o.Hash, r.TraceHash, map[bool]string{true: "the same run", false: "another run"}[same])
	report(t, rt, o, "replay of "+path)
}

// report fails t if o is a bug of the target's variant, with everything
// needed to see it, keep it, replay it and shrink it.
func report(t *testing.T, target explore.Target, o explore.Outcome, which string) {
	t.Helper()
	if !o.Failed() {
		t.Logf("locksim: %s: %s", which, o)
		return
	}
	if *minimizeFlag && !workerKind(o) && o.Schedule == nil {
		if m, err := explore.Minimize(target, o.Seed, o.Plan, o.Findings[0].Kind, 0); err == nil {
			t.Logf("locksim: minimised from %d to %d faults in %d runs", m.SizeBefore, m.SizeAfter, m.Runs)
			target = m.Target
			opt := explore.DefaultOptions()
			opt.Keep = true
			if again, err := explore.RunPlan(target, o.Seed, m.Outcome.Plan, opt); err == nil {
				o = again
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "locksim: %s has a bug (%s)\n%s\n", target.Variant.Name, which, o)
	if len(o.History.Clients) > 0 {
		b.WriteString("timeline around the first violation:\n")
		reports.Timeline(&b, o.History, o.RanPlan(), o.Verdict, reports.TimelineOptions{Around: 2 * time.Second, MaxLines: 40})
	}
	r := explore.NewRepro(target, o)
	r.Minimized = *minimizeFlag
	path, err := explore.WriteRepro(t.ArtifactDir(), r)
	run := "go test -run '" + explore.TestRunPattern(t.Name()) + "'"
	if dir, werr := os.Getwd(); werr == nil {
		run = "cd " + dir + " && " + run
	}
	if err != nil {
		fmt.Fprintf(&b, "repro:    not written: %v\n", err)
	} else {
		fmt.Fprintf(&b, "repro:    %s%s\n", path, keptNote())
		fmt.Fprintf(&b, "replay:   %s -locksim.replay=%s\n", run, path)
	}
	if *replayFlag == "" && o.Schedule == nil {
		fmt.Fprintf(&b, "replay:   %s -locksim.seed=%d\n", run, o.Seed)
	}
	if !*minimizeFlag && o.Schedule == nil {
		fmt.Fprintf(&b, "minimise: %s -locksim.seed=%d -locksim.minimize\n", run, o.Seed)
	}
	t.Fatal(strings.TrimRight(b.String(), "\n"))
}

// keptNote says when the repro file goes away with the test.
func keptNote() string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return ""
	}
	return " (removed after the test: go test -artifacts keeps it)"
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
