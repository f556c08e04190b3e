package explore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
)

// hostLock is a lock written against package algorithm: one item on the
// first node, owned by the host's name. Threads of one host share that
// name, so they all believe they hold the lock: the post's first bug.
type hostLock struct{}

func (hostLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	err := env.Topology(key)[0].WriteIfDoesNotExistsOrSameServer(key+"_lock", env.HostName(), env.Now()+time.Minute)
	return algorithm.Grant{Granted: err == nil}
}

func (hostLock) Release(env algorithm.Env, key string, _ algorithm.Grant) {
	s := env.Topology(key)[0]
	if it, err := s.ReadKey(key + "_lock"); err == nil && it.Owner == env.HostName() {
		s.RemoveKey(key+"_lock", it.Version)
	}
}

// hostVariant is the lock as locksim runs it: a name, a constructor, and
// its envelope (it promises mutual exclusion and assumes nothing).
var hostVariant = algorithm.Variant{Name: "host-lock", Summary: "one item, owned by the host",
	New: func() algorithm.Lock { return hostLock{} }, Envelope: algorithm.Envelope{Promises: algorithm.MutualExclusion}}

// threadsTarget is a world of hosts with three threads each, one minute.
func threadsTarget() explore.Target {
	t := explore.Target{Variant: hostVariant, Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassThreads}}
	t.Config.Duration = time.Minute
	return t
}

// Run a seed and read its verdict: each violation, judged against the
// variant's envelope.
func ExampleRunSeed() {
	o, err := explore.RunSeed(threadsTarget(), 1, explore.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Failed(), o.Findings[0].Kind, o.Findings[0].Standing())
	// Output: true mutual-exclusion bug
}

// Sweep seeds on every core until the first bug, then write its repro file
// and replay it: the same run, the same trace hash.
func ExampleSweep() {
	t := threadsTarget()
	res, err := explore.Sweep(t, explore.SweepOptions{From: 1, Count: 100})
	if err != nil || res.Failed == 0 {
		fmt.Println("no failure", err)
		return
	}
	first := res.Failures[0]
	dir, _ := os.MkdirTemp("", "locksim-example")
	defer os.RemoveAll(dir)
	path, _ := explore.WriteRepro(dir, explore.NewRepro(t, first))
	data, _ := os.ReadFile(path)
	r, _ := explore.DecodeReproFor(data, hostVariant)
	again, _ := explore.Replay(r, explore.DefaultOptions())
	fmt.Println(filepath.Base(path), again.Hash == first.Hash, again.Failed())
	// Output: host-lock-seed-1.json true true
}

// Minimise a failure: the smallest plan and world that still show it.
func ExampleMinimize() {
	t := threadsTarget()
	o, _ := explore.RunSeed(t, 1, explore.DefaultOptions())
	m, err := explore.Minimize(t, o.Seed, o.Plan, o.Findings[0].Kind, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.SizeAfter <= m.SizeBefore, m.Outcome.Failed(), m.Outcome.Findings[0].Kind)
	// Output: true true mutual-exclusion
}
