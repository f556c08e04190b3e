// Package explore is what locksim's users drive: it runs a scenario and
// checks it (Check), hunts across seeds on every core (Sweep), shrinks a
// failing plan (Minimize), and reads and writes repro files. The CLI and the
// tests are thin layers over it, so a failure found by either is replayed
// and minimised the same way.
//
// It sits above sim: it imports sim, model, faults, and variants (to read
// repro files, which name their variant).
package explore

import (
	"fmt"
	"sync"

	"locksim/algorithm"
	"locksim/faults"
	"locksim/model"
	"locksim/sim"
)

// Version is written into every repro file and sweep -json output. It
// changes whenever the same seed may draw another plan or run another way,
// so that replay can say why a recorded run differs and merge can refuse
// shards of different versions. 0.2: swarm crash bursts.
const Version = "locksim/0.2"

// Target is what to explore: an algorithm in a world, under fault classes.
// The variant is a value: a registered one (variants.Lookup), or any other,
// such as a mutant in a test.
type Target struct {
	Variant algorithm.Variant
	Config  sim.Config
	Classes []faults.Class
}

// Outcome is one checked run.
type Outcome struct {
	Seed    uint64
	Plan    faults.Plan
	Verdict model.Verdict
	Hash    uint64
	Events  int64
	History model.History      // kept only when asked (timelines, HTML)
	Trace   []model.TraceEvent // only when traced
}

// Failed reports whether the run found a violation.
func (o Outcome) Failed() bool { return !o.Verdict.OK() }

// Shape is the world a plan for this target must fit.
func (t Target) Shape() faults.Shape {
	c := t.Config
	return faults.Shape{Nodes: c.Nodes, Replication: c.Replication, Hosts: c.Hosts,
		Clients: c.Hosts * c.ThreadsPerHost, Duration: c.Duration}
}

// Validate checks the target before any run: config, variant, classes.
func (t Target) Validate() error {
	if err := t.Config.Validate(); err != nil {
		return err
	}
	if t.Variant.Name == "" || t.Variant.New == nil {
		return fmt.Errorf("target: variant %q has no name or no constructor", t.Variant.Name)
	}
	if err := t.Shape().Validate(); err != nil {
		return err
	}
	return nil
}

// PlanFor is the plan a seed draws: swarm-random over the target's classes.
func (t Target) PlanFor(seed uint64) faults.Plan {
	return faults.Swarm(seed, t.Classes, t.Shape())
}

// buffersPool lends simulator memory to runs whose history is not kept.
var buffersPool = sync.Pool{New: func() any { return new(sim.Buffers) }}

// checkerPool lends checker memory to runs: a verdict keeps none of it.
var checkerPool = sync.Pool{New: func() any { return new(model.Checker) }}

// Options say how much to keep of a run.
type Options struct {
	Check model.CheckOptions
	Keep  bool // keep the History in the Outcome
	Trace bool // record the text trace (slower)
}

// DefaultOptions keeps nothing but the verdict.
func DefaultOptions() Options { return Options{Check: model.DefaultCheckOptions()} }

// RunPlan runs and checks one scenario with an explicit plan.
func RunPlan(t Target, seed uint64, plan faults.Plan, opt Options) (Outcome, error) {
	if t.Variant.New == nil {
		return Outcome{}, fmt.Errorf("variant %q has no constructor", t.Variant.Name)
	}
	return runVariant(t.Variant, t.Config, seed, plan, opt)
}

// RunSeed runs and checks the seed's own plan.
func RunSeed(t Target, seed uint64, opt Options) (Outcome, error) {
	return RunPlan(t, seed, t.PlanFor(seed), opt)
}

func runVariant(v algorithm.Variant, cfg sim.Config, seed uint64, plan faults.Plan, opt Options) (out Outcome, err error) {
	// A buggy algorithm never panics out of sim.Run (the simulator turns it
	// into a finding); a bug in locksim itself must still become an error
	// naming the seed, not a stack trace in the middle of a sweep or replay.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("seed %d: internal error in locksim: %v", seed, r)
		}
	}()
	sc := sim.Scenario{Config: cfg, Variant: v, Seed: seed, Plan: plan, Trace: opt.Trace}
	if !opt.Keep {
		// The history is checked and dropped: its memory can serve the next run.
		b := buffersPool.Get().(*sim.Buffers)
		defer buffersPool.Put(b)
		sc.Buffers = b
	}
	res, err := sim.Run(sc)
	if err != nil {
		return Outcome{}, fmt.Errorf("seed %d: %w", seed, err)
	}
	out = Outcome{Seed: seed, Plan: plan, Hash: res.TraceHash, Events: res.Events, Trace: res.Trace}
	checker := checkerPool.Get().(*model.Checker)
	defer checkerPool.Put(checker)
	out.Verdict = checker.Check(res.History, opt.Check)
	if opt.Keep {
		out.History = res.History
	}
	return out, nil
}
