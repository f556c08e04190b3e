// Package seedrun runs one seed and judges it. A Target (a variant as a
// value, in a world, under fault classes) draws a seed's world and plan
// inside the variant's envelope, or beyond it on purpose (edges.go);
// RunSeed and RunPlan run them in the simulator (or the target's Runner)
// and check the history, and Classify judges each violation against the
// envelope (Finding: a bug, expected, not promised).
//
// It also holds what every way of running many seeds shares: one schedule
// of an exploration, run alike in this process and in a worker (RunNode),
// an Outcome as JSON (OutcomeRecord), a seed's replay command and the
// scenario flags (flags.go), the input limits (limits.go), reading and
// writing files within them (files.go), and the Version every repro file
// and sweep records.
//
// It imports sim, model, faults, sim/envelope and sim/schedule. It takes
// variants as values and knows none by name. Packages isolate, sweep,
// exhaust, minimize, repro and compare build on it; explore re-exports it.
package seedrun

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/schedule"
)

// Version is written into every repro file and sweep -json output. It
// changes whenever the same seed may draw another plan or run another way,
// so that replay can say why a recorded run differs and merge can refuse
// shards of different versions. 0.2: swarm crash bursts. 0.3: seeds draw
// inside their variant's envelope (or beyond it with Target.Beyond). 0.4:
// seeds draw their world too (Target.World).
const Version = "locksim/0.4"

// Target is what to explore: an algorithm in a world, under fault classes.
// The variant is a value: a registered one (variants.Lookup), or any other,
// such as a mutant in a test.
//
// Seeds draw their plans inside the variant's envelope, up to its edges,
// except for the assumptions named in Beyond: each seed breaks a random
// non-empty subset of those on purpose. Each seed also draws the fields of
// its world named in World (envelope.DefaultWorld of the classes, as the
// CLI sets it); Config gives the others, and is the base the draw starts
// from.
type Target struct {
	Variant algorithm.Variant
	Config  sim.Config
	Classes []faults.Class
	Beyond  []algorithm.Assumption
	World   []envelope.WorldField
	// Plan, when set, is the fault plan every seed runs (a hand-written
	// one, locksim -plan FILE) instead of one drawn from Classes; the seed
	// still draws every random choice of the run, and its world if World
	// says so (the plan must fit each).
	Plan *faults.Plan
	// PCT, when set, schedules each seed's message deliveries by client
	// priorities (schedule.PCT) instead of the seed's latency draws.
	PCT *schedule.PCT
	// Runner, when set, runs each seed instead of sim.Run: another way of
	// running the variant (realredis runs unmodified Redis clients), which
	// then needs no algorithm.Lock. Sweeps, replays, repros and
	// minimisation go through it unchanged; schedules and PCT do not.
	Runner Runner
	// Changes are world changes (envelope.ChangeWorld) every seed's world and plan
	// get before it runs: what a sweep of one bug alone removes of the
	// others' worlds (cause.Only). An outcome records the world and plan
	// as changed, so its repro replays without them.
	Changes []algorithm.WorldChange
}

// Runner is another way to run a seed than sim.Run's coroutines.
type Runner interface {
	// Run runs the scenario (its Variant names the lock and its envelope;
	// Choices is never set).
	Run(sim.Scenario) (sim.Result, error)
	// Fit returns a drawn plan without what this runner cannot do: the
	// plan as it will run, and as breaches are judged against.
	Fit(faults.Plan) faults.Plan
}

// DefaultTarget is what locksim sweep -variant v -faults classes explores:
// the post's world (sim.DefaultConfig) as the base, each seed drawing the
// fields its classes' bugs live in (envelope.DefaultWorld), inside the envelope.
// With no classes it is every class.
func DefaultTarget(v algorithm.Variant, classes ...faults.Class) Target {
	if len(classes) == 0 {
		classes = []faults.Class{faults.ClassAll}
	}
	return Target{Variant: v, Config: sim.DefaultConfig(), Classes: classes, World: envelope.DefaultWorld(classes)}
}

// Outcome is one checked run.
type Outcome struct {
	Seed    uint64
	Config  sim.Config // the world the seed ran in (drawn, when the target draws one)
	Plan    faults.Plan
	Verdict model.Verdict
	// Findings are the verdict's violations judged against the variant's
	// envelope, in the verdict's order; Breaches are the assumptions the
	// run broke, whether or not anything went wrong after.
	Findings []Finding
	Breaches []envelope.Breach
	Hash     uint64
	Events   int64
	History  model.History      // kept only when asked (timelines, HTML)
	Trace    []model.TraceEvent // only when traced
	// Schedule, when the run followed one (Exhaust, or a replay of its
	// repro), is the schedule as taken, each deviation in words; Injected
	// are the faults it started, which Plan does not hold (RanPlan does).
	Schedule *schedule.Schedule
	Injected []faults.Event
	strict   bool
	check    model.CheckOptions // what the verdict was checked with
}

// RanPlan is the plan as the run ran it: Plan, and the faults a schedule
// injected, in the order they started.
func (o Outcome) RanPlan() faults.Plan {
	if len(o.Injected) == 0 {
		return o.Plan
	}
	p := o.Plan
	p.Events = append(slices.Clip(p.Events), o.Injected...)
	return p
}

// Failed reports whether the run found a bug of the variant: a violation of
// a promised property inside its envelope (with Options.Strict, any
// violation at all).
func (o Outcome) Failed() bool {
	if o.strict {
		return !o.Verdict.OK()
	}
	return o.Bugs() > 0
}

// OnlyLiveness reports whether every bug of the run (with Strict, every
// violation) is of liveness: waiters starved, items left behind.
func (o Outcome) OnlyLiveness() bool {
	if o.strict {
		for _, v := range o.Verdict.Violations {
			if !v.Kind.IsLiveness() {
				return false
			}
		}
		return len(o.Verdict.Violations) > 0
	}
	n := 0
	for _, f := range o.Findings {
		if f.Bug() {
			if !f.Kind.IsLiveness() {
				return false
			}
			n++
		}
	}
	return n > 0
}

// Bugs counts the findings that are bugs of the variant.
func (o Outcome) Bugs() int {
	n := 0
	for _, f := range o.Findings {
		if f.Bug() {
			n++
		}
	}
	return n
}

// Expected reports whether a promised property broke only outside the
// envelope (and nothing broke inside it).
func (o Outcome) Expected() bool { return o.Bugs() == 0 && o.count(Finding.Expected) > 0 }

// Unpromised reports whether the run broke only properties the variant
// does not promise.
func (o Outcome) Unpromised() bool {
	return len(o.Findings) > 0 && o.count(func(f Finding) bool { return f.Promised }) == 0
}

func (o Outcome) count(pred func(Finding) bool) int {
	n := 0
	for _, f := range o.Findings {
		if pred(f) {
			n++
		}
	}
	return n
}

// Inside reports whether the run broke none of the envelope's assumptions.
func (o Outcome) Inside() bool { return len(o.Breaches) == 0 }

// CheckOptions are the check options the run's verdict was found with.
func (o Outcome) CheckOptions() model.CheckOptions { return o.check }

// Shape is the world a plan for this target must fit.
func (t Target) Shape() faults.Shape {
	return sim.ShapeOf(t.Config)
}

// Validate checks the target before any run: config, variant, classes.
func (t Target) Validate() error {
	if err := t.Config.Validate(); err != nil {
		return err
	}
	if t.Variant.Name == "" || t.Variant.New == nil && t.Runner == nil {
		return fmt.Errorf("target: variant %q has no name or no constructor", t.Variant.Name)
	}
	if t.Runner != nil && t.PCT != nil {
		return errors.New("target: PCT schedules the kernel's deliveries; this target runs its seeds another way")
	}
	if err := t.Shape().Validate(); err != nil {
		return err
	}
	for _, f := range t.World {
		if !slices.Contains(envelope.EveryWorldField, f) {
			_, err := envelope.ParseWorld(string(f))
			return fmt.Errorf("target: %v", err)
		}
	}
	if t.PCT != nil {
		if err := t.PCT.Validate(); err != nil {
			return fmt.Errorf("target: %v", err)
		}
	}
	if t.Plan != nil {
		if err := t.Plan.Validate(sim.ShapeOf(t.Config.Under(*t.Plan))); err != nil {
			return fmt.Errorf("target: the plan does not fit the world or is not valid: %v", err)
		}
		if len(t.Beyond) > 0 {
			return errors.New("target: a given plan breaks what it breaks: -beyond draws plans, and there is none to draw")
		}
	}
	return t.Edges().ValidateBeyond()
}

// PlanFor is the plan a seed draws: swarm-random over the target's classes,
// within its bounds, in the world the seed draws.
func (t Target) PlanFor(seed uint64) faults.Plan {
	if t.Plan != nil {
		return *t.Plan
	}
	t = t.At(seed)
	bd := t.BoundsAt(seed)
	p := faults.SwarmWithin(seed, t.Classes, t.Shape(), bd)
	if t.Runner != nil {
		// Unmodified code is also used the way applications misuse it
		// (holders that stall past their validity, short deadlines):
		// stalls are the pause class's.
		if faults.Allow(t.Classes...).Has(faults.ClassPause) {
			p.Use = faults.DrawUse(seed, t.Config.TTL)
		}
		// A bug at the edge of the drift bound (a validity without the
		// margin) needs the nodes that grant to run at the edge together.
		p = faults.NodeDriftsAtEdge(seed, p, bd, t.Config.Nodes)
		p = t.Runner.Fit(p)
	}
	return p
}

// buffersPool lends simulator memory to runs whose history is not kept.
var buffersPool = sync.Pool{New: func() any { return new(sim.Buffers) }}

// checkerPool lends checker memory to runs: a verdict keeps none of it.
var checkerPool = sync.Pool{New: func() any { return new(model.Checker) }}

// Options say how much to keep of a run, and what fails it.
type Options struct {
	Check model.CheckOptions
	Keep  bool // keep the History in the Outcome, with every lock item's stays (for Outcome.Stuck)
	Trace bool // record the text trace (slower)
	// Strict fails a run on any violation, inside the envelope or not,
	// promised or not.
	Strict bool
	// Schedule, when set, decides every choice point of the run instead of
	// the seed's random draws (a repro of Exhaust's).
	Schedule *schedule.Schedule
}

// DefaultOptions keeps nothing but the verdict.
func DefaultOptions() Options { return Options{Check: model.DefaultCheckOptions()} }

// RunPlan runs and checks one scenario with an explicit plan.
func RunPlan(t Target, seed uint64, plan faults.Plan, opt Options) (Outcome, error) {
	if t.Variant.New == nil && t.Runner == nil {
		return Outcome{}, fmt.Errorf("variant %q has no constructor", t.Variant.Name)
	}
	cfg := t.At(seed).Config
	v := t.Variant
	for _, c := range t.Changes {
		var err error
		if cfg, plan, v, _, err = envelope.ChangeWorld(c, cfg, plan, v); err != nil {
			return Outcome{}, err
		}
	}
	t.Variant = v
	under := cfg.Under(plan)
	if t.Runner != nil {
		if opt.Schedule != nil {
			return Outcome{}, fmt.Errorf("variant %q runs its seeds another way: it cannot follow a schedule", t.Variant.Name)
		}
		return runWith(t.Runner.Run, t.Variant, cfg, seed, t.Runner.Fit(plan), opt, nil)
	}
	switch {
	case opt.Schedule != nil:
		return runSchedule(t.Variant, cfg, seed, plan, opt, schedule.NewChooser(*opt.Schedule, under, -1, nil, true))
	case t.PCT != nil:
		return runVariant(t.Variant, cfg, seed, plan, opt, t.PCT.Choices(seed, under.Hosts*under.ThreadsPerHost))
	}
	return runVariant(t.Variant, cfg, seed, plan, opt, nil)
}

// runSchedule runs and checks one scenario whose choice points ch decides,
// and records the schedule as the run took it.
func runSchedule(v algorithm.Variant, cfg sim.Config, seed uint64, plan faults.Plan, opt Options, ch *schedule.Chooser) (Outcome, error) {
	out, err := runVariant(v, cfg, seed, plan, opt, func(sim.Chooser) sim.Chooser { return ch })
	if err == nil {
		err = ch.Check()
	}
	if err != nil {
		return Outcome{}, err
	}
	s := ch.Schedule()
	out.Schedule = &s
	return out, nil
}

// RunSeed runs and checks the seed's own world and plan.
func RunSeed(t Target, seed uint64, opt Options) (Outcome, error) {
	t = t.At(seed)
	return RunPlan(t, seed, t.PlanFor(seed), opt)
}

// runVariant runs and checks one scenario; choices, when set, makes the
// Chooser of its choice points (Scenario.Choices).
func runVariant(v algorithm.Variant, cfg sim.Config, seed uint64, plan faults.Plan, opt Options, choices func(sim.Chooser) sim.Chooser) (out Outcome, err error) {
	return runWith(sim.Run, v, cfg, seed, plan, opt, choices)
}

// runWith runs and checks one scenario with run (sim.Run, or a Runner's).
func runWith(run func(sim.Scenario) (sim.Result, error), v algorithm.Variant, cfg sim.Config, seed uint64, plan faults.Plan, opt Options, choices func(sim.Chooser) sim.Chooser) (out Outcome, err error) {
	// A buggy algorithm never panics out of sim.Run (the simulator turns it
	// into a finding); a bug in locksim itself must still become an error
	// naming the seed, not a stack trace in the middle of a sweep or replay.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("seed %d: internal error in locksim: %v", seed, r)
		}
	}()
	sc := sim.Scenario{Config: cfg, Variant: v, Seed: seed, Plan: plan, Trace: opt.Trace, Choices: choices, Items: opt.Keep}
	if !opt.Keep {
		// The history is checked and dropped: its memory can serve the next run.
		b := buffersPool.Get().(*sim.Buffers)
		defer buffersPool.Put(b)
		sc.Buffers = b
	}
	res, err := run(sc)
	if err != nil {
		return Outcome{}, fmt.Errorf("seed %d: %w", seed, err)
	}
	out = Outcome{Seed: seed, Config: cfg, Plan: plan, Hash: res.TraceHash, Events: res.Events, Trace: res.Trace,
		Injected: res.Injected, strict: opt.Strict, check: opt.Check}
	checker := checkerPool.Get().(*model.Checker)
	defer checkerPool.Put(checker)
	out.Verdict = checker.Check(res.History, opt.Check)
	out.Breaches = envelope.Breaches(v.Envelope, cfg, out.RanPlan(), res.History)
	out.Findings = Classify(v.Envelope, out.Verdict, out.Breaches, opt.Check.LivenessBound(res.History))
	if opt.Keep {
		out.History = res.History
	}
	return out, nil
}
