package isolate_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/compare"
	"github.com/locksim/locksim/sim/exhaust"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/minimize"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// broken wraps corrected with a deliberate harness-breaking mistake that
// client h0/t0 makes in one seed in oneIn (decided by its first random
// draw, so by the seed): the other seeds are corrected's, clean.
type broken struct {
	base    algorithm.Lock
	mistake func(env algorithm.Env, key string)
	oneIn   int
	decided bool
	bad     bool
}

func (b *broken) Acquire(env algorithm.Env, key string) algorithm.Grant {
	if !b.decided {
		b.decided = true
		b.bad = env.ClientName() == "h0/t0" && env.Rand().IntN(b.oneIn) == 0
	}
	if b.bad {
		b.mistake(env, key)
	}
	return b.base.Acquire(env, key)
}

func (b *broken) Release(env algorithm.Env, key string, g algorithm.Grant) {
	b.base.Release(env, key, g)
}

// hog keeps what the unbounded allocation allocates reachable.
var hog [][]byte

// brokenCases are the mistakes isolation must contain, each with the kind
// of finding it is, wherever its seeds run: a sweep, a comparison, an
// exploration, a minimisation, locksimtest.Check.
var brokenCases = []struct {
	name    string
	mistake func(env algorithm.Env, key string)
	kind    model.ViolationKind
}{
	// A loop that never calls the Env: only the wall clock sees it.
	{"spin", func(algorithm.Env, string) {
		for {
		}
	}, model.Hang},
	{"unbounded-alloc", func(algorithm.Env, string) {
		for {
			hog = append(hog, make([]byte, 1<<20))
		}
	}, model.Memory},
	{"panic-in-acquire", func(algorithm.Env, string) {
		panic("broken: Acquire panicked")
	}, model.Panic},
	{"panic-in-goroutine", func(algorithm.Env, string) {
		done := make(chan struct{})
		go func() { defer close(done); panic("broken: a goroutine of the lock panicked") }()
		<-done
	}, model.Crash},
	// A goroutine that keeps calling the Env while its client sleeps.
	{"env-from-goroutine", func(env algorithm.Env, _ string) {
		go func() {
			for {
				env.Now()
			}
		}()
		env.Sleep(time.Millisecond)
	}, model.Misuse},
	// The client waits for its own goroutine, which calls a server.
	{"waits-on-own-goroutine", func(env algorithm.Env, key string) {
		s := env.Topology(key)[0]
		done := make(chan struct{})
		go func() {
			s.ReadKey(key + "_lock")
			close(done)
		}()
		<-done
	}, model.Misuse},
	// Server calls without end: virtual time passes, but the client never
	// sleeps or returns (sim.Config.MaxCallsNoSleep).
	{"endless-calls", func(env algorithm.Env, key string) {
		for {
			for _, s := range env.Topology(key) {
				s.ReadKey(key + "_lock")
			}
		}
	}, model.Livelock},
	// A stack overflow is a fatal error, not a panic: no recover sees it.
	{"recursion", func(env algorithm.Env, key string) {
		var down func(n int) int
		down = func(n int) int { return down(n+1) + 1 }
		down(0)
	}, model.Crash},
	{"os-exit", func(algorithm.Env, string) {
		os.Exit(3)
	}, model.Crash},
	{"goexit", func(algorithm.Env, string) {
		runtime.Goexit()
	}, model.Panic},
}

// brokenVariant is corrected whose h0/t0 makes the mistake of case name in
// one seed in oneIn.
func brokenVariant(name string, oneIn int) algorithm.Variant {
	for _, bc := range brokenCases {
		if bc.name == name {
			base := variant("corrected")
			v := base
			v.Name = "broken-" + name
			v.Summary = fmt.Sprintf("corrected that, in one seed in %d, makes the mistake %s", oneIn, name)
			v.New = func() algorithm.Lock { return &broken{base: base.New(), mistake: bc.mistake, oneIn: oneIn} }
			return v
		}
	}
	panic("no broken case " + name)
}

// BrokenVariantForTest is brokenVariant, for the package's external tests
// (locksimtest.Check's).
func BrokenVariantForTest(name string, oneIn int) (algorithm.Variant, model.ViolationKind) {
	for _, bc := range brokenCases {
		if bc.name == name {
			return brokenVariant(name, oneIn), bc.kind
		}
	}
	panic("no broken case " + name)
}

// BrokenCaseNames are the names of the broken cases, for the external tests.
func BrokenCaseNames() []string {
	var out []string
	for _, bc := range brokenCases {
		out = append(out, bc.name)
	}
	return out
}

// brokenTarget is a short world, one fault class, for the broken variants.
func brokenTarget(v algorithm.Variant) seedrun.Target {
	tg := seedrun.Target{Variant: v, Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassLoss}}
	tg.Config.Duration = 2 * time.Minute
	return tg
}

// testIsolation is the isolation of the broken variants' tests: a hang
// within a second, a memory finding at 256 MiB. Recursion gets longer
// before it counts as a hang (HangBudgetForTest).
func testIsolation(t *testing.T) *isolate.Isolation {
	return &isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name()), HangAfter: HangBudgetForTest(t.Name()), MemoryLimit: 256 << 20}
}

// HangBudgetForTest is how long a broken case's run may take before it is
// a hang: a second, but for endless recursion, which takes about a third
// of a second to overflow a worker's stack on an idle machine and was seen
// to take over a second on a loaded one (go test ./... on two cores):
// the test is that the overflow is a crash, not how fast the machine is.
func HangBudgetForTest(testName string) time.Duration {
	if strings.Contains(testName, "recursion") {
		return 10 * time.Second
	}
	return time.Second
}

// internalWords are what no finding may show: the simulator's own types,
// or addresses.
var internalWords = regexp.MustCompile(`sim\.[a-z]|0x[0-9a-f]{6,}|Signal\b`)

// Every broken variant is contained, with the finding of its kind and
// nothing of the simulator's insides in its story, by each way of running
// seeds: a sweep (whose other seeds pass), a comparison (whose cell counts
// the seeds as aborted, A, and says the kind), an exploration (whose
// counterexample is the finding) and a minimisation (which shrinks what a
// plan can shrink, and answers the others with the finding).
func TestBrokenVariantsAreContained(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and waits out hang budgets")
	}
	for _, bc := range brokenCases {
		t.Run(bc.name, func(t *testing.T) {
			if raceEnabled && bc.kind == model.Misuse {
				t.Skip("the race detector reports the misuse itself")
			}
			t.Run("sweep", func(t *testing.T) { containedSweep(t, bc.name, bc.kind) })
			t.Run("compare", func(t *testing.T) { containedCompare(t, bc.name, bc.kind) })
			t.Run("explore", func(t *testing.T) { containedExplore(t, bc.name, bc.kind) })
			t.Run("minimize", func(t *testing.T) { containedMinimize(t, bc.name, bc.kind) })
		})
	}
}

// checkStory fails t if a finding's story is not of kind or shows the
// simulator's insides.
func checkStory(t *testing.T, what string, v model.Violation, kind model.ViolationKind) {
	t.Helper()
	if v.Kind != kind {
		t.Errorf("%s: %s: %s, want %s", what, v.Kind, v.Story, kind)
	}
	if internalWords.MatchString(v.Story) {
		t.Errorf("%s: the story shows the simulator's insides: %s", what, v.Story)
	}
}

func containedSweep(t *testing.T, name string, kind model.ViolationKind) {
	const n = 12
	res, err := sweep.Sweep(brokenTarget(brokenVariant(name, 4)), sweep.SweepOptions{From: 1, Count: n, KeepGoing: true, Isolate: testIsolation(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != n || res.Failed == 0 || res.Failed == n {
		t.Fatalf("%d of %d seeds ran, %d failed: want every one run, some failing, not all", res.Runs, n, res.Failed)
	}
	for _, f := range res.Failures {
		checkStory(t, fmt.Sprintf("seed %d", f.Seed), f.Findings[0].Violation, kind)
	}
	t.Logf("%d of %d seeds: %s", res.Failed, n, res.Failures[0].Findings[0].Violation)
}

func containedCompare(t *testing.T, name string, kind model.ViolationKind) {
	v := brokenVariant(name, 4)
	cfg := sim.DefaultConfig()
	cfg.Duration = 2 * time.Minute
	var cell compare.CellResult
	m, err := compare.Compare(compare.CompareOptions{Variants: []algorithm.Variant{v}, Classes: []faults.Class{faults.ClassLoss}, Seeds: 8,
		Config: cfg, Minimize: true, Isolate: testIsolation(t), OnCell: func(r compare.CellResult) { cell = r }})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Rows[0].Cells[0]
	if c.Seeds != 8 || c.Violations == 0 || c.Kinds.Aborted != c.Violations {
		t.Fatalf("cell: %d seeds, %d with a bug, %d aborted: want 8 seeds, every failing one an abort (A)", c.Seeds, c.Violations, c.Kinds.Aborted)
	}
	if !strings.HasPrefix(c.Story, string(kind)+" at ") {
		t.Errorf("cell story %q does not say %s", c.Story, kind)
	}
	checkStory(t, "the cell's first failure", cell.First.Findings[0].Violation, kind)
	t.Logf("%d of 8 seeds: %s", c.Violations, c.Story)
}

func containedExplore(t *testing.T, name string, kind model.ViolationKind) {
	tg := seedrun.Target{Variant: brokenVariant(name, 1), Config: exhaust.SmallWorld(3, 2, 1)}
	tg.Config.MaxCallsNoSleep = 1000 // endless calls meet the cap before the run ends
	res, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 1, Isolate: testIsolation(t)})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Counterexample
	if x == nil || x.Schedule == nil {
		t.Fatalf("no counterexample: %s", res)
	}
	checkStory(t, "the counterexample", x.Verdict.Violations[0], kind)
	t.Logf("%s", res)
}

// containedMinimize minimises the first failure of a sweep (in workers,
// which serve the minimisation too).
func containedMinimize(t *testing.T, name string, kind model.ViolationKind) {
	tg := brokenTarget(brokenVariant(name, 4))
	iso := testIsolation(t)
	sw, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 12, StopOn: sweep.StopOnAny, Isolate: iso})
	if err != nil || sw.Failed == 0 {
		t.Fatalf("a sweep to find a failure to minimise: %d failed, err %v", sw.Failed, err)
	}
	first := sw.Failures[0]
	res, err := minimize.MinimizeWith(tg, first.Seed, first.Plan, kind, minimize.MinimizeOptions{MaxRuns: 40, Isolate: iso})
	var finding *isolate.FindingError
	switch {
	case kind.IsProcessDeath():
		if !errors.As(err, &finding) {
			t.Fatalf("minimising a %s: %v, want its finding as a FindingError", kind, err)
		}
		checkStory(t, "the finding", finding.Outcome.Verdict.Violations[0], kind)
		t.Logf("%v", err)
	case err != nil:
		t.Fatal(err)
	default:
		v, ok := res.Outcome.Verdict.First(kind)
		if !ok {
			t.Fatalf("the minimal run shows no %s: %v", kind, res.Outcome.Verdict)
		}
		checkStory(t, "the minimal run", v, kind)
		t.Logf("minimised in %d runs, plan size %d → %d: %s", res.Runs, res.SizeBefore, res.SizeAfter, v)
	}
}

// A clean sweep gives the same counts and the same outcomes isolated as in
// this process.
func TestIsolatedSweepMatchesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	tg := seedrun.DefaultTarget(variant("fenced"))
	tg.Config.Duration = time.Minute
	var here, there []string
	rec := func(to *[]string) func(seedrun.Outcome) {
		return func(o seedrun.Outcome) {
			*to = append(*to, fmt.Sprintf("%d %016x %d %d %v", o.Seed, o.Hash, o.Events, len(o.Findings), o.Failed()))
		}
	}
	a, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 200, KeepGoing: true, OnOutcome: rec(&here)})
	if err != nil {
		t.Fatal(err)
	}
	iso := isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name())}
	b, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 200, KeepGoing: true, OnOutcome: rec(&there), Isolate: &iso})
	if err != nil {
		t.Fatal(err)
	}
	if a.Runs != b.Runs || a.Events != b.Events || a.Failed != b.Failed || a.Inside != b.Inside || a.Unpromised != b.Unpromised || a.Expected != b.Expected {
		t.Fatalf("in process %+v, isolated %+v", a, b)
	}
	if strings.Join(here, "\n") != strings.Join(there, "\n") {
		t.Fatal("the outcomes differ between in-process and isolated sweeps")
	}
}

// A worker command that never reaches the sweep is a harness error that
// says so, not a finding of any seed.
func TestIsolationWithAWrongCommandSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a worker process")
	}
	iso := isolate.Isolation{Command: isolate.TestWorkerCommand("TestNoSuchTest"), StartTimeout: 10 * time.Second}
	_, err := sweep.Sweep(seedrun.DefaultTarget(variant("corrected")), sweep.SweepOptions{From: 1, Count: 4, Isolate: &iso})
	if err == nil || !strings.Contains(err.Error(), "did not reach") {
		t.Fatalf("err %v, want one saying the worker did not reach the sweep", err)
	}
}

// RaceEnabledForTest is raceEnabled, for the external tests.
func RaceEnabledForTest() bool { return raceEnabled }
