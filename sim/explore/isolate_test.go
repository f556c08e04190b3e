package explore

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// broken wraps corrected with a deliberate harness-breaking mistake that
// client h0/t0 makes in about one seed in four (decided by its first random
// draw, so by the seed): the other seeds are corrected's, clean.
type broken struct {
	base    algorithm.Lock
	mistake func(env algorithm.Env, key string)
	decided bool
	bad     bool
}

func (b *broken) Acquire(env algorithm.Env, key string) algorithm.Grant {
	if !b.decided {
		b.decided = true
		b.bad = env.ClientName() == "h0/t0" && env.Rand().IntN(4) == 0
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

// brokenCases are the mistakes isolation must turn into findings, each
// with the kinds it may be reported as.
var brokenCases = []struct {
	name    string
	mistake func(env algorithm.Env, key string)
	kinds   []model.ViolationKind
}{
	{"spin", func(algorithm.Env, string) {
		for {
		}
	}, []model.ViolationKind{model.Hang}},
	// A goroutine that keeps calling the Env: seen as soon as it calls
	// while another client or the event loop runs.
	{"goroutine", func(env algorithm.Env, _ string) {
		go func() {
			for {
				env.Now()
			}
		}()
		env.Sleep(time.Millisecond)
	}, []model.ViolationKind{model.Misuse, model.Crash, model.Hang}},
	{"unbounded-alloc", func(algorithm.Env, string) {
		for {
			hog = append(hog, make([]byte, 1<<20))
		}
	}, []model.ViolationKind{model.Memory}},
	{"panic-in-goroutine", func(algorithm.Env, string) {
		done := make(chan struct{})
		go func() { defer close(done); panic("broken: a goroutine of the lock panicked") }()
		<-done
	}, []model.ViolationKind{model.Crash}},
	// Server calls without end: virtual time passes, but the client never
	// sleeps or returns (sim.Config.MaxCallsNoSleep).
	{"endless-calls", func(env algorithm.Env, key string) {
		for {
			for _, s := range env.Topology(key) {
				s.ReadKey(key + "_lock")
			}
		}
	}, []model.ViolationKind{model.Livelock}},
}

func brokenVariant(t testing.TB, name string, mistake func(algorithm.Env, string)) algorithm.Variant {
	base := variant("corrected")
	v := base
	v.Name = "broken-" + name
	v.Summary = "corrected that, in one seed in four, " + name
	v.New = func() algorithm.Lock { return &broken{base: base.New(), mistake: mistake} }
	return v
}

// Every broken variant yields a finding with its seed, of its kind, and the
// sweep completes every other seed, which passes.
func TestIsolationTurnsBrokenVariantsIntoFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and waits out hang budgets")
	}
	for _, bc := range brokenCases {
		t.Run(bc.name, func(t *testing.T) {
			if bc.name == "goroutine" && (raceEnabled || runtime.GOMAXPROCS(0) < 2) {
				t.Skip("the race detector reports the misuse itself; one core may never run the goroutine")
			}
			tg := Target{Variant: brokenVariant(t, bc.name, bc.mistake), Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassLoss}}
			tg.Config.Duration = 2 * time.Minute
			iso := Isolation{Command: TestWorkerCommand(t.Name()), HangAfter: time.Second, MemoryLimit: 256 << 20}
			const n = 12
			res, err := Sweep(tg, SweepOptions{From: 1, Count: n, KeepGoing: true, Isolate: &iso})
			if err != nil {
				t.Fatal(err)
			}
			if res.Runs != n {
				t.Fatalf("%d of %d seeds ran", res.Runs, n)
			}
			if res.Failed == 0 || res.Failed == n {
				t.Fatalf("%d of %d seeds failed: want some, not all", res.Failed, n)
			}
			for _, f := range res.Failures {
				if !kindIn(f.Findings[0].Kind, bc.kinds) {
					t.Errorf("seed %d: %s, want one of %v", f.Seed, f.Findings[0].Story, bc.kinds)
				}
			}
			t.Logf("%d of %d seeds: %s", res.Failed, n, res.Failures[0].Findings[0].Story)
		})
	}
}

func kindIn(k model.ViolationKind, ks []model.ViolationKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// A clean sweep gives the same counts and the same outcomes isolated as in
// this process.
func TestIsolatedSweepMatchesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	tg := DefaultTarget(variant("fenced"))
	tg.Config.Duration = time.Minute
	var here, there []string
	rec := func(to *[]string) func(Outcome) {
		return func(o Outcome) {
			*to = append(*to, fmt.Sprintf("%d %016x %d %d %v", o.Seed, o.Hash, o.Events, len(o.Findings), o.Failed()))
		}
	}
	a, err := Sweep(tg, SweepOptions{From: 1, Count: 200, KeepGoing: true, OnOutcome: rec(&here)})
	if err != nil {
		t.Fatal(err)
	}
	iso := Isolation{Command: TestWorkerCommand(t.Name())}
	b, err := Sweep(tg, SweepOptions{From: 1, Count: 200, KeepGoing: true, OnOutcome: rec(&there), Isolate: &iso})
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
	iso := Isolation{Command: TestWorkerCommand("TestNoSuchTest"), StartTimeout: 10 * time.Second}
	_, err := Sweep(DefaultTarget(variant("corrected")), SweepOptions{From: 1, Count: 4, Isolate: &iso})
	if err == nil || !strings.Contains(err.Error(), "did not reach") {
		t.Fatalf("err %v, want one saying the worker did not reach the sweep", err)
	}
}
