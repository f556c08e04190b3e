package isolate

import (
	"errors"
	"fmt"
	"sync"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/schedule"
	"github.com/locksim/locksim/sim/seedrun"
)

// workerPool keeps a call's idle workers for its next sweep (Compare runs
// hundreds): a worker's start costs a process and the program's way to
// the isolated call.
type workerPool struct {
	iso    Isolation // without pool
	key    string
	mu     sync.Mutex
	idle   []*worker
	closed bool
}

func newPool(iso Isolation, key string) *workerPool {
	iso.pool = nil
	return &workerPool{iso: iso, key: key}
}

// get is an idle worker, or a new one.
func (p *workerPool) get() (*worker, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	return p.fresh()
}

// fresh is a new worker.
func (p *workerPool) fresh() (*worker, error) { return startWorker(p.iso, p.key) }

// put keeps a worker that finished every job it was sent for the next
// call's sweep, or ends it once the pool is closed.
func (p *workerPool) put(w *worker) {
	p.mu.Lock()
	if !p.closed {
		p.idle = append(p.idle, w)
		w = nil
	}
	p.mu.Unlock()
	if w != nil {
		w.close()
	}
}

// close ends the idle workers; those in use end when put back.
func (p *workerPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.close()
	}
}

// Contain validates iso for a call that knows variants vs, run by runner
// (nil: the kernel), and gives it a pool of workers that serve any such
// call (familyKey), unless it has one (a comparison's, which its sweeps
// and explorations share); release ends the pool's idle workers (nothing
// when iso had its pool). other: this process is a worker for another
// call, which then does nothing.
func Contain(iso Isolation, vs []algorithm.Variant, runner seedrun.Runner) (contained Isolation, release func(), other bool, err error) {
	if err := iso.Validate(); err != nil {
		return iso, nil, false, err
	}
	key := familyKey(vs, runner)
	if serveFamily(key, vs, runner) {
		return iso, nil, true, nil
	}
	if iso.pool != nil {
		return iso, func() {}, false, nil
	}
	pool := newPool(iso, key)
	iso.pool = pool
	return iso, pool.close, false, nil
}

// Queue runs seeds (or schedules) of one call in a worker process, and
// starts a fresh worker after one fails. Jobs are queued ahead (Send), so
// the worker starts the next chunk while the coordinator reads the last
// one's replies (Collect): waiting for each round trip left the worker
// idle and cost the sweep several percent.
type Queue struct {
	iso    Isolation
	t      seedrun.Target // what jobs without a target of their own run
	run    seedrun.Options
	own    *workerPool // the workers' pool when iso has none
	w      *worker
	queued []Job // sent to w, replies not read yet
}

// NewQueue runs seeds (or schedules) of a call in worker processes: those
// of target t under run, unless a job says otherwise.
func NewQueue(iso Isolation, t seedrun.Target, run seedrun.Options) *Queue {
	return &Queue{iso: iso, t: t, run: run}
}

// Result is one seed's outcome (or one schedule's); ByWorker: a
// finding of the worker itself (crash, hang, memory, misuse), with no run
// behind it. Node is a schedule's result for its exploration.
type Result struct {
	Out      seedrun.Outcome
	Err      error
	ByWorker bool
	Node     seedrun.NodeResult
}

// outsideAttempts is how often a seed running alone is run again when its
// worker is killed from outside (kill -9 by someone, the system's
// out-of-memory killer) before that is its finding.
const outsideAttempts = 5

func (r *Queue) pool() *workerPool {
	if r.iso.pool != nil {
		return r.iso.pool
	}
	if r.own == nil {
		r.own = newPool(r.iso, familyKey(r.variants(), r.t.Runner))
	}
	return r.own
}

func (r *Queue) variants() []algorithm.Variant { return []algorithm.Variant{r.t.Variant} }

// seeds runs seeds (each with plan, or its own when nil) and returns their
// results in order (see Collect).
func (r *Queue) seeds(seeds []uint64, plan *faults.Plan, stop <-chan struct{}) ([]Result, error) {
	if err := r.Send(Job{Seeds: seeds, Plan: plan}); err != nil {
		return nil, err
	}
	return r.Collect(stop)
}

// Send queues j at the worker, starting one if there is none. A job
// without a target runs the call's, with its run options.
func (r *Queue) Send(j Job) error {
	if j.Target.Variant == "" {
		j.Target, j.Run, j.t = specOf(r.t), r.run, r.t
	}
	if r.w == nil {
		w, err := r.pool().get()
		if err != nil {
			return err
		}
		r.w = w
	}
	r.w.send(j)
	r.queued = append(r.queued, j)
	return nil
}

// Collect returns the results of the oldest job sent, in order: all of
// them, unless stop closed first or the harness failed (err). A job whose
// worker failed runs again one item at a time, each in a fresh worker
// (alone), so that a finding names the seed that fails alone, and never
// one whose worker something else took down: a seed that passes alone
// passes. The jobs queued behind it are sent again.
func (r *Queue) Collect(stop <-chan struct{}) ([]Result, error) {
	j := r.queued[0]
	replies, f := r.w.replies(j.items(), stop)
	out := r.results(j, replies)
	if f == nil {
		r.queued = r.queued[1:]
		return out, nil
	}
	lost := r.queued[1:]
	r.drop()
	if f == errStopped {
		return out, nil
	}
	rest := j.from(len(replies))
	for i := range rest.items() {
		var failed *failure
		if j.solo {
			failed = f // the job was one item, alone: the failure is its own
		}
		one, err := r.alone(rest.one(i), failed, stop)
		out = append(out, one...)
		if err != nil || len(one) == 0 {
			return out, err // stopped, or the harness failed
		}
	}
	for _, l := range lost {
		if err := r.Send(l); err != nil {
			return out, err
		}
	}
	return out, nil
}

// alone runs a job of one item in a fresh worker (failed: it just failed
// so, alone); if that worker fails too, it is the item's finding, unless
// something outside killed it, when it runs again (up to outsideAttempts).
func (r *Queue) alone(j Job, failed *failure, stop <-chan struct{}) ([]Result, error) {
	for attempt := 1; ; attempt++ {
		f := failed
		failed = nil
		if f == nil {
			if r.w != nil {
				r.pool().put(r.w) // it ran the item before, alone, and passed
				r.w = nil
			}
			w, err := r.pool().fresh()
			if err != nil {
				return nil, err
			}
			r.w, r.queued = w, []Job{j}
			w.send(j)
			replies, wf := w.replies(1, stop)
			if wf == nil {
				r.queued = nil
				return r.results(j, replies), nil // the worker goes on with the jobs after
			}
			if r.drop(); wf == errStopped {
				return nil, nil
			}
			f = wf
		}
		if !f.outside || attempt >= outsideAttempts {
			return []Result{r.finding(j, f, attempt)}, nil
		}
	}
}

// drop ends the worker, which failed or was stopped, and forgets its jobs.
func (r *Queue) drop() {
	r.queued = nil
	if r.w != nil {
		r.w.kill()
		<-r.w.exited
		r.w = nil
	}
}

// results turns replies into outcomes: seed, hash, events, findings and
// breaches; with findings, their world and plan; a failing seed's verdict.
// A failing seed whose history or trace is asked for runs again here (a
// run is deterministic), unless its finding could take this process down,
// or the caller takes the runs' metrics instead (Isolation.metrics: it
// runs again what it shows).
func (r *Queue) results(j Job, replies []reply) []Result {
	out := make([]Result, 0, len(replies))
	for i, rep := range replies {
		switch {
		case rep.Err != "":
			out = append(out, Result{Err: errors.New(rep.Err)})
		case j.Nodes != nil:
			out = append(out, r.nodeResult(j, j.Nodes[i], rep))
		default:
			out = append(out, r.seedResult(j, rep))
		}
	}
	return out
}

func (r *Queue) seedResult(j Job, rep reply) Result {
	if rep.Metrics != nil && r.iso.metrics != nil {
		r.iso.metrics.put(rep.Seed, *rep.Metrics)
	}
	o := rep.Outcome(j.t, j.Plan, j.Run, len(rep.Findings) > 0 || rep.Failed)
	if rep.Failed && (j.Run.Keep || j.Run.Trace) && !o.ProcessDeath() && r.iso.metrics == nil {
		again, err := Run(j.t, rep.Seed, j.Plan, j.Run, nil)
		return Result{Out: again, Err: err}
	}
	return Result{Out: o}
}

// nodeResult is a schedule's result; a failing one's outcome is kept when
// it must not run again in this process.
func (r *Queue) nodeResult(j Job, n NodeJob, rep reply) Result {
	res := seedrun.NodeResult{Ran: true, Failed: rep.Failed, Hash: rep.Key, Events: rep.Events, Alts: rep.Alts}
	if !rep.Failed {
		return Result{Node: res}
	}
	o := rep.Outcome(j.t, j.Target.Plan, j.Run, true)
	o.Schedule = &schedule.Schedule{Menu: *j.Menu, Deviations: n.Dev}
	if o.ProcessDeath() {
		res.Finding = &o
	}
	return Result{Out: o, Node: res}
}

// finding is the outcome of an item whose worker failed, alone, attempts
// times: one violation of the failure's kind, which every variant promises
// against.
func (r *Queue) finding(j Job, f *failure, attempts int) Result {
	if f.outside && attempts > 1 {
		f = &failure{kind: f.kind, detail: fmt.Sprintf("%s, %d times running alone", f.detail, attempts)}
	}
	if j.Nodes != nil {
		o := seedrun.FailureOutcome(j.t, schedule.ExploreSeed, j.Target.Plan, j.Run, f.kind, f.detail)
		o.Schedule = &schedule.Schedule{Menu: *j.Menu, Deviations: j.Nodes[0].Dev}
		return Result{Out: o, ByWorker: true,
			Node: seedrun.NodeResult{Ran: true, Failed: true, Hash: uint64(len(f.kind)), Finding: &o}}
	}
	return Result{Out: seedrun.FailureOutcome(j.t, j.Seeds[0], j.Plan, j.Run, f.kind, f.detail), ByWorker: true}
}

// Close gives the worker back to its pool once every job sent to it is
// done, or ends it.
func (r *Queue) Close() {
	if r.w != nil {
		if len(r.queued) == 0 {
			r.pool().put(r.w)
		} else {
			r.w.close()
		}
		r.w = nil
	}
	if r.own != nil {
		r.own.close()
	}
}

// Run runs one seed with plan (nil: the seed's own), in a worker process
// when iso is set (RunIsolated), else here: what a command or a test that
// replays one seed calls.
func Run(t seedrun.Target, seed uint64, plan *faults.Plan, opt seedrun.Options, iso *Isolation) (seedrun.Outcome, error) {
	switch {
	case iso != nil:
		return RunIsolated(t, seed, plan, opt, *iso)
	case plan != nil:
		return seedrun.RunPlan(t, seed, *plan, opt)
	}
	return seedrun.RunSeed(t, seed, opt)
}

// RunIsolated runs one seed with plan (nil: the seed's own) in a worker
// process, as a sweep with Isolation would: a crash, hang, memory or
// misuse finding is returned as the outcome. Otherwise the seed runs
// again here, so the outcome is whole (history and trace as opt asks).
func RunIsolated(t seedrun.Target, seed uint64, plan *faults.Plan, opt seedrun.Options, iso Isolation) (seedrun.Outcome, error) {
	if err := iso.Validate(); err != nil {
		return seedrun.Outcome{}, err
	}
	if ServeIfWorker(Fingerprint("run", t, opt), t) {
		return seedrun.Outcome{}, errors.New("isolation: this process is a worker for another call")
	}
	r := NewQueue(iso, t, opt)
	defer r.Close()
	// The seed runs alone in a fresh worker: a failure is its own.
	if err := r.Send(AloneJob(t, opt, seed, plan, false)); err != nil {
		return seedrun.Outcome{}, err
	}
	rs, err := r.Collect(nil)
	if err != nil {
		return seedrun.Outcome{}, err
	}
	if rs[0].Err != nil || rs[0].ByWorker || rs[0].Out.ProcessDeath() {
		return rs[0].Out, rs[0].Err
	}
	return Run(r.t, seed, plan, opt, nil)
}
