// Package minimize shrinks a failing run by delta debugging (Minimize):
// its plan's faults, its world and its duration, while the run still shows
// the violation (and a bug of the variant stays one, inside the envelope).
// Candidates run in this process or in worker processes (package isolate).
//
// It imports seedrun and isolate.
package minimize

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/seedrun"
)

// MinimizeResult is a smaller failing scenario and how it was reached.
type MinimizeResult struct {
	Target      seedrun.Target
	Outcome     seedrun.Outcome // the minimal run (verdict, plan)
	Runs        int             // scenarios tried
	SizeBefore  int             // faults.Plan.Size of the original plan
	SizeAfter   int
	DurationWas time.Duration
}

// Minimize shrinks a failing plan by delta debugging while the run still
// shows a violation of kind: drop timed faults (halves, then one by one),
// zero steady knobs, remove clock settings and fault points, shorten and
// weaken what remains, cut the run just after the violation, and try fewer
// clients and nodes. A bug of the variant (inside its envelope) stays a
// bug: a candidate that shows the violation only after breaking an
// assumption is not kept. A target that draws its world runs in the seed's
// (the result's Target is that world, shrunk: fields move back to the
// post's where the violation stays). Every candidate is a full deterministic run;
// maxRuns bounds the work (0: 2000). MinimizeWith runs them in worker
// processes.
func Minimize(t seedrun.Target, seed uint64, plan faults.Plan, kind model.ViolationKind, maxRuns int) (MinimizeResult, error) {
	return MinimizeWith(t, seed, plan, kind, MinimizeOptions{MaxRuns: maxRuns})
}

// MinimizeWhile is Minimize keeping only candidates that keep also accepts
// (nil: any): to shrink a run while it shows one particular bug, not just
// a violation of the same kind. keep sees each candidate's outcome with
// its history.
func MinimizeWhile(t seedrun.Target, seed uint64, plan faults.Plan, kind model.ViolationKind, keep func(seedrun.Outcome) bool, maxRuns int) (MinimizeResult, error) {
	return MinimizeWith(t, seed, plan, kind, MinimizeOptions{MaxRuns: maxRuns, Keep: keep})
}

// MinimizeOptions say how Minimize works.
type MinimizeOptions struct {
	MaxRuns int                        // bound on the candidates run; 0: 2000
	Keep    func(seedrun.Outcome) bool // see MinimizeWhile; nil: any candidate of the kind
	// Isolate, when set, runs the seed and every candidate in worker
	// processes (Isolation): a candidate that crashes, hangs, exhausts
	// memory or misuses the Env is not kept (it did not show kind), and
	// when the seed's own run does, that finding is the answer, as a
	// *FindingError: there is nothing to shrink. Keep's candidates run
	// again here, for their history, once they showed kind in a worker.
	Isolate *isolate.Isolation
	// KeepWorld shrinks only the plan and the run's length, never the
	// world (nodes, hosts, threads, TTL, holds, latency): for a lock whose
	// world is its deployment (locksimtest.CheckRedis: three masters and
	// an 8 s TTL), a smaller or the post's world is another lock's.
	KeepWorld bool
}

// MinimizeWith is Minimize with options.
func MinimizeWith(t seedrun.Target, seed uint64, plan faults.Plan, kind model.ViolationKind, o MinimizeOptions) (MinimizeResult, error) {
	if o.MaxRuns == 0 {
		o.MaxRuns = 2000
	}
	t = t.At(seed) // the seed's world, which candidates then change
	m := &minimizer{t: t, seed: seed, kind: kind, keep: o.Keep, maxRuns: o.MaxRuns, keepWorld: o.KeepWorld}
	if o.Isolate != nil {
		iso, err := m.contain(*o.Isolate)
		if err != nil || iso == nil {
			return MinimizeResult{}, err
		}
		defer iso.Close()
	} else if kind.IsProcessDeath() {
		return MinimizeResult{}, fmt.Errorf("minimize: a %s finding cannot be minimised in this process, which it would take down; run its candidates in workers (MinimizeOptions.Isolate)", kind)
	}
	first, ok, err := m.try(t, plan)
	if err != nil {
		return MinimizeResult{}, err
	}
	if first.ProcessDeath() {
		return MinimizeResult{}, &isolate.FindingError{Outcome: first}
	}
	if !ok {
		return MinimizeResult{}, fmt.Errorf("minimize: seed %d shows no %s violation to begin with", seed, kind)
	}
	m.keepBug = hasBug(first, kind)
	m.best, m.bestOut = t, first
	m.shrink()
	return MinimizeResult{Target: m.best, Outcome: m.bestOut, Runs: m.runs,
		SizeBefore: plan.Size(), SizeAfter: m.bestOut.Plan.Size(), DurationWas: t.Config.Duration}, nil
}

type minimizer struct {
	t       seedrun.Target
	seed    uint64
	kind    model.ViolationKind
	keepBug bool // the violation is a bug of the variant: candidates must keep it one
	keep    func(seedrun.Outcome) bool
	maxRuns int
	// keepWorld: candidates change the plan and the run's length only
	keepWorld bool
	runs      int
	best      seedrun.Target
	bestOut   seedrun.Outcome
	iso       *isolate.Queue // nil: candidates run in this process
}

// contain runs the candidates in workers; nil: this process is a worker
// for another call.
func (m *minimizer) contain(iso isolate.Isolation) (*isolate.Queue, error) {
	if err := iso.Validate(); err != nil {
		return nil, err
	}
	if isolate.ServeIfWorker(isolate.Fingerprint("minimize", m.t, seedrun.DefaultOptions()), m.t) {
		return nil, errors.New("isolation: this process is a worker for another call")
	}
	m.iso = isolate.NewQueue(iso, m.t, seedrun.DefaultOptions())
	return m.iso, nil
}

// try runs a candidate and reports whether it still fails the same way.
func (m *minimizer) try(t seedrun.Target, p faults.Plan) (seedrun.Outcome, bool, error) {
	m.runs++
	cfg := t.Config.Under(p)
	if cfg.Validate() != nil || p.Validate(seedrun.Target{Config: cfg}.Shape()) != nil {
		return seedrun.Outcome{}, false, nil // not a valid candidate: skip it
	}
	opt := seedrun.DefaultOptions()
	opt.Keep = m.keep != nil
	o, err := m.run(t, p, opt)
	if err != nil {
		return seedrun.Outcome{}, false, err
	}
	_, ok := o.Verdict.First(m.kind)
	ok = ok && (!m.keepBug || hasBug(o, m.kind)) && (m.keep == nil || m.keep(o))
	o.History = model.History{} // not kept in the result: callers rerun it to see it
	return o, ok, nil
}

// run runs a candidate, here or in a worker (then, for keep's history,
// here again once it showed the kind there).
func (m *minimizer) run(t seedrun.Target, p faults.Plan, opt seedrun.Options) (seedrun.Outcome, error) {
	if m.iso == nil {
		return seedrun.RunPlan(t, m.seed, p, opt)
	}
	// The first run is alone in a fresh worker; later ones are in a
	// worker that ran only candidates: a failure is their own.
	in := opt
	in.Keep = false
	if err := m.iso.Send(isolate.AloneJob(t, in, m.seed, &p, true)); err != nil {
		return seedrun.Outcome{}, err
	}
	rs, err := m.iso.Collect(nil)
	if err != nil || len(rs) == 0 {
		return seedrun.Outcome{}, err
	}
	o := rs[0].Out
	if _, shows := o.Verdict.First(m.kind); rs[0].Err == nil && opt.Keep && shows && !o.ProcessDeath() {
		return seedrun.RunPlan(t, m.seed, p, opt)
	}
	return o, rs[0].Err
}

// hasBug reports whether o shows a violation of kind that is a bug of the
// variant.
func hasBug(o seedrun.Outcome, kind model.ViolationKind) bool {
	for _, f := range o.Findings {
		if f.Kind == kind && f.Bug() {
			return true
		}
	}
	return false
}

// accept keeps a candidate if it still fails.
func (m *minimizer) accept(t seedrun.Target, p faults.Plan) bool {
	if m.runs >= m.maxRuns {
		return false
	}
	o, ok, err := m.try(t, p)
	if err != nil || !ok {
		return false
	}
	m.best, m.bestOut = t, o
	return true
}

func (m *minimizer) plan() faults.Plan { return clonePlan(m.bestOut.Plan) }

func (m *minimizer) shrink() {
	for progress := true; progress && m.runs < m.maxRuns; {
		progress = false
		progress = m.cutDuration() || progress
		progress = m.dropEvents() || progress
		progress = m.dropSteady() || progress
		progress = m.weakenEvents() || progress
		if !m.keepWorld {
			progress = m.fewerProcesses() || progress
			progress = m.postWorld() || progress
		}
	}
}

// postWorld moves each field of the world back to the post's (the default
// config), one at a time: a repro that needs fewer unusual settings says
// more plainly which one matters.
func (m *minimizer) postWorld() bool {
	progress := false
	d := sim.DefaultConfig()
	for _, set := range []func(*sim.Config) bool{
		func(c *sim.Config) bool { return reset(&c.RestartingVersions, d.RestartingVersions) },
		func(c *sim.Config) bool { return reset(&c.SlowExtra, d.SlowExtra) },
		func(c *sim.Config) bool { return reset(&c.AppData, d.AppData) },
		func(c *sim.Config) bool {
			return anyOf(reset(&c.LatencyMin, d.LatencyMin), reset(&c.LatencyMax, d.LatencyMax), reset(&c.LatencyTail, d.LatencyTail))
		},
		func(c *sim.Config) bool { return anyOf(reset(&c.ThinkMin, d.ThinkMin), reset(&c.ThinkMax, d.ThinkMax)) },
		func(c *sim.Config) bool { return anyOf(reset(&c.HoldMin, d.HoldMin), reset(&c.HoldMax, d.HoldMax)) },
		func(c *sim.Config) bool { return reset(&c.TTL, d.TTL) },
		func(c *sim.Config) bool { return reset(&c.Replication, d.Replication) },
		// Nodes, hosts and threads only ever shrink (fewerProcesses): a
		// reset to the post's five nodes could undo that.
	} {
		t := m.best
		if set(&t.Config) && m.accept(t, m.plan()) {
			progress = true
		}
	}
	return progress
}

// anyOf reports whether one of bs is true; unlike ||, every argument has been
// evaluated (each reset must run).
func anyOf(bs ...bool) bool { return slices.Contains(bs, true) }

// reset sets *x to def, reporting whether that changed it.
func reset[T comparable](x *T, def T) bool {
	if *x == def {
		return false
	}
	*x = def
	return true
}

// cutDuration ends the run just after the violation (safety kinds only:
// liveness needs the time after the faults heal).
func (m *minimizer) cutDuration() bool {
	v, _ := m.bestOut.Verdict.First(m.kind)
	if !m.kind.IsSafety() || v.Time <= 0 {
		return false
	}
	end := time.Duration(v.Time) + time.Second
	if end >= m.best.Config.Duration {
		return false
	}
	t := m.best
	t.Config.Duration = end
	p := m.plan()
	p.Events = slices.DeleteFunc(p.Events, func(e faults.Event) bool { return e.At >= end })
	return m.accept(t, p)
}

// dropEvents is ddmin over the timed faults: remove chunks, halving the
// chunk size down to single events.
func (m *minimizer) dropEvents() bool {
	progress := false
	for chunk := max(1, len(m.bestOut.Plan.Events)/2); chunk >= 1; chunk /= 2 {
		for start := 0; start < len(m.bestOut.Plan.Events); {
			p := m.plan()
			end := min(start+chunk, len(p.Events))
			p.Events = slices.Delete(p.Events, start, end)
			if m.accept(m.best, p) {
				progress = true // same start now names the next chunk
			} else {
				start += chunk
			}
		}
	}
	return progress
}

// dropSteady zeroes network knobs, clock settings, points, extra threads.
func (m *minimizer) dropSteady() bool {
	progress := false
	edits := []func(*faults.Plan) bool{
		func(p *faults.Plan) bool { return zero(&p.Network.LossPPM) },
		func(p *faults.Plan) bool { return zero(&p.Network.DuplicatePPM) },
		func(p *faults.Plan) bool { return zero(&p.Network.ReplyLossPPM) },
		func(p *faults.Plan) bool { return zero(&p.Network.ExtraLatencyMax) },
		func(p *faults.Plan) bool { return zero(&p.Points.PausePPM) },
		func(p *faults.Plan) bool { return zero(&p.ThreadsPerHost) },
		func(p *faults.Plan) bool { return zero(&p.Use) },
		func(p *faults.Plan) bool { return zero(&p.Use.LatePPM) && zero(&p.Use.LateBy) },
		func(p *faults.Plan) bool { return zero(&p.Use.ShortDeadlinePPM) && zero(&p.Use.Deadline) },
		func(p *faults.Plan) bool { return zero(&p.Use.RefreshPPM) },
		func(p *faults.Plan) bool { // points that never pause
			return p.Points.PausePPM == 0 && zero(&p.Points)
		},
	}
	for _, edit := range edits {
		p := m.plan()
		if edit(&p) && m.accept(m.best, p) {
			progress = true
		}
	}
	progress = dropEach(m, func(p *faults.Plan) *[]faults.Clock { return &p.Clocks }) || progress
	progress = dropEach(m, func(p *faults.Plan) *[]faults.Zone { return &p.Zones }) || progress
	return progress
}

// dropEach removes the elements of the plan's list one at a time, keeping
// each removal after which the run still fails.
func dropEach[T any](m *minimizer, list func(*faults.Plan) *[]T) bool {
	progress := false
	for i := 0; i < len(*list(&m.bestOut.Plan)); {
		p := m.plan()
		l := list(&p)
		*l = slices.Delete(*l, i, i+1)
		if m.accept(m.best, p) {
			progress = true
		} else {
			i++
		}
	}
	return progress
}

// weakenEvents halves every magnitude that is left while the run still fails.
func (m *minimizer) weakenEvents() bool {
	progress := false
	halve := func(get func(*faults.Plan) *time.Duration) {
		for {
			p := m.plan()
			d := get(&p)
			if *d == 0 || (*d > -time.Millisecond && *d < time.Millisecond) {
				return
			}
			*d /= 2
			if !m.accept(m.best, p) {
				return
			}
			progress = true
		}
	}
	for i := range m.bestOut.Plan.Events {
		halve(func(p *faults.Plan) *time.Duration { return &p.Events[i].For })
		halve(func(p *faults.Plan) *time.Duration { return &p.Events[i].Delta })
	}
	for i := range m.bestOut.Plan.Clocks {
		halve(func(p *faults.Plan) *time.Duration { return &p.Clocks[i].Offset })
	}
	halve(func(p *faults.Plan) *time.Duration { return &p.Points.PauseFor })
	halve(func(p *faults.Plan) *time.Duration { return &p.Network.ExtraLatencyMax })
	return progress
}

// fewerProcesses tries smaller worlds; candidates whose plan no longer fits
// are skipped by try.
func (m *minimizer) fewerProcesses() bool {
	progress := false
	for _, f := range []func(*seedrun.Target) bool{
		func(t *seedrun.Target) bool { return dec(&t.Config.Hosts) },
		func(t *seedrun.Target) bool { return dec(&t.Config.ThreadsPerHost) },
		func(t *seedrun.Target) bool { return dec(&t.Config.Nodes) },
	} {
		for {
			t := m.best
			if !f(&t) || !m.accept(t, m.plan()) {
				break
			}
			progress = true
		}
	}
	return progress
}

func zero[T comparable](x *T) bool {
	var z T
	if *x == z {
		return false
	}
	*x = z
	return true
}

func dec(x *int) bool {
	if *x <= 1 {
		return false
	}
	*x--
	return true
}

// clonePlan deep-copies a plan so candidates never share slices.
func clonePlan(p faults.Plan) faults.Plan {
	p.Clocks = slices.Clone(p.Clocks)
	p.Zones = slices.Clone(p.Zones)
	p.Events = slices.Clone(p.Events)
	for i := range p.Events {
		p.Events[i].Nodes = slices.Clone(p.Events[i].Nodes)
		p.Events[i].Hosts = slices.Clone(p.Events[i].Hosts)
	}
	return p
}
