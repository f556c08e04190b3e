package isolate_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// killer kills the sweep's worker processes, one at a time, at random
// intervals, until it has killed want or stop closes: what kill -9 from
// outside (another process, the system's out-of-memory killer) does.
type killer struct {
	mu      sync.Mutex
	workers []*os.Process
	killed  int
}

func (k *killer) started(p *os.Process) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.workers = append(k.workers, p)
}

// kill kills a live worker at random, and reports whether it found one.
func (k *killer) kill(r *rand.Rand) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.workers) > 0 {
		i := r.IntN(len(k.workers))
		err := k.workers[i].Kill()
		if err == nil {
			k.killed++
			return true
		}
		if !errors.Is(err, os.ErrProcessDone) {
			panic(err)
		}
		k.workers = append(k.workers[:i], k.workers[i+1:]...)
	}
	return false
}

// run kills a worker at random intervals until it killed want, then
// closes stop a second later (time for the sweep to run again what the
// last kill took down) and closes done.
func (k *killer) run(want int, stop, done chan<- struct{}) {
	defer close(done)
	r := rand.New(rand.NewPCG(1, 2)) // the wall clock decides when: the kills vary anyway
	for k.killed < want {
		time.Sleep(time.Duration(40+r.IntN(80)) * time.Millisecond)
		k.kill(r)
	}
	time.Sleep(time.Second)
	close(stop)
}

// Workers killed from outside (kill -9, 60 times during a sweep of a
// clean variant) blame no seed: each seed a killed worker had not finished
// runs again alone, in a fresh worker, and passes. The sweep, stopped a
// second after the last kill, has the summary and every outcome of the
// same seeds swept unkilled.
func TestKilledWorkersBlameNoSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("kills worker processes for seconds")
	}
	const kills = 60
	tg := seedrun.DefaultTarget(variant("corrected"))
	tg.Config.Duration = time.Minute
	var here, there []string
	rec := func(to *[]string) func(seedrun.Outcome) {
		return func(o seedrun.Outcome) {
			*to = append(*to, fmt.Sprintf("%d %016x %d %d %v", o.Seed, o.Hash, o.Events, len(o.Findings), o.Failed()))
		}
	}
	k := &killer{}
	stop, done := make(chan struct{}), make(chan struct{})
	if !isolate.IsWorker() { // a worker only serves the isolated sweep
		isolate.SetWorkerStarted(k.started)
		defer isolate.SetWorkerStarted(nil)
		go k.run(kills, stop, done)
	}
	start := time.Now()
	iso := isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name())}
	got, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 1 << 30, KeepGoing: true, OnOutcome: rec(&there), Isolate: &iso, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	took := time.Since(start)
	want, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: got.Runs, KeepGoing: true, OnOutcome: rec(&here)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d workers killed during a sweep of %d seeds (%s); %d failing seeds, %d in the unkilled sweep",
		k.killed, got.Runs, took.Round(time.Millisecond), got.Failed, want.Failed)
	if got.Runs < 1000 || got.Runs != want.Runs || got.Events != want.Events || got.Failed != want.Failed ||
		got.Inside != want.Inside || got.Expected != want.Expected || got.Unpromised != want.Unpromised {
		t.Fatalf("killed %+v, unkilled %+v", got, want)
	}
	for _, f := range got.Failures {
		t.Errorf("seed %d: %s", f.Seed, f.Findings[0].Violation)
	}
	if strings.Join(here, "\n") != strings.Join(there, "\n") {
		t.Fatal("the outcomes differ from the unkilled sweep's")
	}
}

// A job bigger than the pipe to its worker holds, queued behind a seed
// that hangs, does not hang the sweep: the worker that takes no job within
// the hang budget is a hang, of the seed it was running.
func TestABigJobBehindAHangingSeedIsAHang(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and waits out hang budgets")
	}
	tg := brokenTarget(brokenVariant("spin", 1))
	plan := faults.Plan{}
	for i := range 3000 { // some 200 KB of JSON in every job
		plan.Events = append(plan.Events, faults.Event{At: time.Duration(i+1) * 10 * time.Millisecond, Kind: faults.Clog, Node: i % 5, For: time.Millisecond})
	}
	tg.Plan, tg.Classes = &plan, nil
	iso := isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name()), HangAfter: time.Second}
	res, err := sweep.Sweep(tg, sweep.SweepOptions{From: 1, Count: 2, Parallel: 1, KeepGoing: true, Isolate: &iso})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 2 || res.Failed != 2 {
		t.Fatalf("%d seeds ran, %d failed: want both, hung", res.Runs, res.Failed)
	}
	for _, f := range res.Failures {
		if k := f.Findings[0].Kind; k != model.Hang {
			t.Errorf("seed %d: %s, want a hang", f.Seed, f.Findings[0].Violation)
		}
	}
}
