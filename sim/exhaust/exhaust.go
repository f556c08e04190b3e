// Package exhaust explores systematically (Exhaust): every schedule of a
// small world with at most k deviations from the default run,
// breadth-first by the number of faults, so that the first counterexample
// has the fewest faults there are. Each schedule runs through
// seedrun.RunNode, in this process or in a worker process (package
// isolate).
//
// It imports schedule, seedrun and isolate.
package exhaust

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/schedule"
	"github.com/locksim/locksim/sim/seedrun"
)

// ExhaustOptions bound a systematic exploration.
type ExhaustOptions struct {
	// MaxFaults is k: every schedule with at most this many deviations from
	// the default run is explored, for 0, 1, ..., k faults in turn.
	MaxFaults int
	// MaxSchedules stops the exploration, incomplete, before a level that
	// would take it past this many runs; 0 means DefaultMaxSchedules.
	MaxSchedules int
	// Menu is what a deviation may be; nil: MenuFor(target), inside the
	// variant's envelope.
	Menu     *schedule.Menu
	Parallel int // workers; 0 means every core
	Check    model.CheckOptions
	Strict   bool
	// KeepGoing explores every level up to MaxFaults even after one with a
	// failing schedule (Counterexample is still the first level's first):
	// how many schedules fail at each bound.
	KeepGoing bool
	// OnLevel, if set, sees each level once it is explored, in order (and
	// one that Stop interrupted, with the schedules it ran).
	OnLevel func(Level)
	// OnProgress, if set, sees the running count of schedules explored,
	// from the goroutine that called Exhaust, now and then.
	OnProgress func(done, total int)
	// OnFound, if set, sees the first failing schedule a level's workers
	// come upon, rerun with its history, as soon as it is found (from a
	// worker's goroutine): a counterexample with the fewest faults there
	// are, to keep before the level ends (an interrupt, a crash). The
	// Counterexample the result reports is the level's first by position,
	// which may be another with as many faults. Not called for a level
	// after the one with the Counterexample (KeepGoing).
	OnFound func(seedrun.Outcome)
	// HangAfter, when positive, ends the exploration with a *HangError
	// once one schedule's run has taken longer than this of wall-clock
	// time: a variant that loops without calling its Env, which nothing
	// in the process can interrupt. Zero: wait for every run.
	HangAfter time.Duration
	// Stop, when closed, ends the exploration early: the schedules running
	// finish, the rest of the level is not run (ExhaustResult.Interrupted).
	// A failing schedule among those run is still a counterexample with
	// the fewest faults there are: every level before it was run whole.
	Stop <-chan struct{}
	// Isolate, when set, runs the schedules in worker processes
	// (Isolation), as a sweep runs its seeds: a schedule whose run
	// crashes, hangs, exhausts memory or misuses the Env is a failing
	// schedule with that finding (a counterexample without a history),
	// and the exploration goes on. HangAfter is then Isolate's.
	Isolate *isolate.Isolation
}

// DefaultMaxSchedules bounds an exploration unless told otherwise.
const DefaultMaxSchedules = 2_000_000

// Level is what an exploration found among the schedules with exactly
// Faults deviations.
type Level struct {
	Faults    int   `json:"faults"`
	Schedules int   `json:"schedules"` // explored
	Failing   int   `json:"failing"`   // of which failed (a bug of the variant; with Strict, any violation)
	Events    int64 `json:"events"`    // simulator events, summed
	// Distinct counts the distinct executions among the schedules: by
	// trace hash and the faults injected (a clock stepped but not yet read
	// leaves the trace alike and the world not). Schedules - Distinct is
	// what merging schedules that ran alike would save.
	Distinct int `json:"distinct"`
}

// ExhaustResult is an exploration's answer: a counterexample with the
// fewest faults there are (within the bound), or a bounded result.
type ExhaustResult struct {
	Target seedrun.Target
	Menu   schedule.Menu
	Levels []Level
	// Counterexample is the first failing schedule of the first level that
	// has one (deviations in the order the run met them, the lowest
	// positions first), rerun with its history; nil: none within the bound.
	Counterexample *seedrun.Outcome
	// Complete says the exploration ran to its end: to the level of its
	// counterexample (to MaxFaults with KeepGoing), or to MaxFaults without
	// one; false: the schedule budget ran out first (Levels says how far
	// it got).
	Complete  bool
	MaxFaults int
	// Refused, when the budget stopped the exploration, is how many
	// schedules the next level would have had.
	Refused int
	// Interrupted: Stop was closed during the last level, whose Schedules
	// counts those run; Of is how many it has.
	Interrupted bool
	Of          int
}

// Schedules is how many schedules the exploration ran.
func (r ExhaustResult) Schedules() int {
	n := 0
	for _, l := range r.Levels {
		n += l.Schedules
	}
	return n
}

// String is the result in a sentence: "no violation in all 1,204 schedules
// with ≤ 2 faults (3 nodes, 2 clients, 1 acquisition each)", or the
// counterexample's fault count and faults.
func (r ExhaustResult) String() string {
	world := r.World()
	budget := ""
	switch {
	case r.Interrupted:
		last := r.Levels[len(r.Levels)-1]
		budget = fmt.Sprintf("; interrupted after %s of the %s with %s", reports.Thousands(last.Schedules), reports.Plural(r.Of, "schedule"), reports.Plural(last.Faults, "fault"))
	case !r.Complete:
		budget = fmt.Sprintf("; the budget ran out before %s with %s", reports.Plural(r.Refused, "schedule"), reports.Plural(len(r.Levels), "fault"))
	}
	if x := r.Counterexample; x != nil {
		return fmt.Sprintf("counterexample with %s, the fewest there are (%s): %s; %s%s", reports.Plural(x.Schedule.Faults(), "fault"), world, x.Schedule, x.Verdict.Violations[0].Story, budget)
	}
	if r.Interrupted && r.Schedules() == 0 {
		return fmt.Sprintf("interrupted before a schedule had run (%s)", world)
	}
	if r.Interrupted {
		last := r.Levels[len(r.Levels)-1]
		return fmt.Sprintf("no violation in %s: all those with ≤ %s, and %s of the %s with %s, of the %d asked for (%s); interrupted",
			reports.Plural(r.Schedules(), "schedule"), reports.Plural(last.Faults-1, "fault"), reports.Thousands(last.Schedules),
			reports.Thousands(r.Of), reports.Plural(last.Faults, "fault"), r.MaxFaults, world)
	}
	if !r.Complete {
		return fmt.Sprintf("no violation in %s, all those with ≤ %s of the %d asked for (%s)%s",
			reports.Plural(r.Schedules(), "schedule"), reports.Plural(len(r.Levels)-1, "fault"), r.MaxFaults, world, budget)
	}
	if r.Schedules() == 1 {
		return fmt.Sprintf("no violation in the one schedule with ≤ %s (%s)", reports.Plural(r.MaxFaults, "fault"), world)
	}
	return fmt.Sprintf("no violation in all %s with ≤ %s (%s)", reports.Plural(r.Schedules(), "schedule"), reports.Plural(r.MaxFaults, "fault"), world)
}

// World is the explored world in words: "3 nodes, replication 3, 2
// clients, 1 grant each".
func (r ExhaustResult) World() string {
	c := r.Target.Config
	return fmt.Sprintf("%s, replication %d, %s, %s each", reports.Plural(c.Nodes, "node"), c.Replication,
		reports.Plural(c.Hosts*c.ThreadsPerHost, "client"), reports.Plural(c.Acquisitions, "grant"))
}

// frontierNode is one schedule to run: its deviations, and from which
// branching point its children may deviate (after its last deviation).
// A level of k = 3 holds millions of them, so they are compact: a
// deviation is a point and an alternative, 8 bytes.
type frontierNode struct {
	dev  []step
	from int
}

type step struct {
	pos int32
	alt uint8
}

// deviations is n's schedule, as a Schedule lists it.
func (n frontierNode) deviations() []schedule.Deviation {
	out := make([]schedule.Deviation, len(n.dev))
	for i, d := range n.dev {
		out[i] = schedule.Deviation{Pos: int(d.pos), Alt: int(d.alt)}
	}
	return out
}

// Exhaust explores every schedule of t's world with at most MaxFaults
// deviations from the default run, breadth-first by the number of faults,
// so the first counterexample it finds has the fewest faults there are.
// Each schedule is a run of the real variant in the simulator, with every
// choice point decided by the schedule (Schedule); it stops at the first
// level with a failing schedule, unless KeepGoing. The exploration is
// deterministic: the result does not depend on Parallel.
//
// No reduction is applied: schedules that run alike are each run, and
// counted (Level.Distinct says how many executions they make; in the small
// worlds all but a few hundredths of a percent are distinct).
func Exhaust(t seedrun.Target, o ExhaustOptions) (ExhaustResult, error) {
	if err := t.Validate(); err != nil {
		return ExhaustResult{}, err
	}
	if t.Plan == nil {
		t.Plan = new(faults.Plan)
	}
	if o.MaxFaults < 0 {
		return ExhaustResult{}, fmt.Errorf("exhaust: max faults %d is negative", o.MaxFaults)
	}
	if t.Config.Acquisitions < 1 {
		return ExhaustResult{}, errors.New("exhaust: the world needs clients that stop (Config.Acquisitions, -acquisitions, at least 1): clients that go on until the run ends make every run long and every level huge")
	}
	menu, o := o.defaults(t)
	res := ExhaustResult{Target: t, Menu: menu, MaxFaults: o.MaxFaults}
	if o.Isolate != nil {
		iso, release, other, err := isolate.Contain(*o.Isolate, []algorithm.Variant{t.Variant}, t.Runner)
		if err != nil || other {
			return res, err
		}
		defer release()
		o.Isolate = &iso
	}
	frontier := []frontierNode{{}}
	done := 0
	for k := 0; ; k++ {
		report := o.OnFound
		if res.Counterexample != nil {
			report = nil // a level past the counterexample's: its failures are only counted
		}
		results, err := exhaustLevel(t, menu, frontier, o, done, k < o.MaxFaults, report)
		if err != nil {
			return res, err
		}
		lv, first := tally(k, results)
		done += lv.Schedules
		res.Levels = append(res.Levels, lv)
		if o.OnLevel != nil {
			o.OnLevel(lv)
		}
		if first >= 0 && res.Counterexample == nil {
			out, err := counterexample(t, menu, frontier[first], results[first], o)
			if err != nil {
				return res, err
			}
			res.Counterexample = &out
		}
		if lv.Schedules < len(frontier) {
			res.Interrupted, res.Of = true, len(frontier)
			return res, nil
		}
		if k == o.MaxFaults || (res.Counterexample != nil && !o.KeepGoing) {
			res.Complete = true
			return res, nil
		}
		next, n := expand(frontier, results, o.MaxSchedules-done)
		if next == nil {
			res.Refused = n // the budget would run out during level k+1
			return res, nil
		}
		frontier = next
	}
}

// counterexample is a failing schedule's outcome: run again here with its
// history, unless it must not run in this process (its finding, then).
func counterexample(t seedrun.Target, menu schedule.Menu, n frontierNode, r seedrun.NodeResult, o ExhaustOptions) (seedrun.Outcome, error) {
	if r.Finding != nil {
		return *r.Finding, nil
	}
	out, _, err := runNode(t, menu, n, o, true, nil)
	return out, err
}

// defaults is the menu o explores t with, and o with its zero fields
// given their defaults.
func (o ExhaustOptions) defaults(t seedrun.Target) (schedule.Menu, ExhaustOptions) {
	menu := seedrun.MenuFor(t)
	if o.Menu != nil {
		menu = *o.Menu
	}
	if o.MaxSchedules <= 0 {
		o.MaxSchedules = DefaultMaxSchedules
	}
	if o.Check == (model.CheckOptions{}) {
		o.Check = model.DefaultCheckOptions()
	}
	return menu, o
}

// tally is level k's counts from its results, and the index of its first
// failing schedule (-1: none).
func tally(k int, results []seedrun.NodeResult) (Level, int) {
	lv := Level{Faults: k}
	first := -1
	for i, r := range results {
		if !r.Ran {
			continue
		}
		lv.Schedules++
		lv.Events += r.Events
		if r.Failed {
			lv.Failing++
			if first < 0 {
				first = i
			}
		}
	}
	lv.Distinct = distinct(results)
	return lv, first
}

// distinct counts the distinct execution keys of a level's runs.
func distinct(results []seedrun.NodeResult) int {
	hs := make([]uint64, 0, len(results))
	for _, r := range results {
		if r.Ran {
			hs = append(hs, r.Hash)
		}
	}
	slices.Sort(hs)
	return len(slices.Compact(hs))
}

// expand is the next level: each schedule of this one with one more
// deviation after its last, in order, and how many there are; nil if
// that is more than budget.
func expand(frontier []frontierNode, results []seedrun.NodeResult, budget int) ([]frontierNode, int) {
	n := 0
	for _, r := range results {
		for _, a := range r.Alts {
			n += int(a)
		}
	}
	if n > budget {
		return nil, n
	}
	next := make([]frontierNode, 0, n)
	for i, f := range frontier {
		for j, a := range results[i].Alts {
			p := f.from + j
			for alt := 1; alt <= int(a); alt++ {
				dev := append(append(make([]step, 0, len(f.dev)+1), f.dev...), step{int32(p), uint8(alt)})
				next = append(next, frontierNode{dev: dev, from: p + 1})
			}
		}
	}
	return next, n
}

// stopped reports whether stop is closed (never, when nil).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// exhaustLevel runs every schedule of a level, on every core, each result
// in its node's place.
func exhaustLevel(t seedrun.Target, menu schedule.Menu, frontier []frontierNode, o ExhaustOptions, before int, expands bool, found func(seedrun.Outcome)) ([]seedrun.NodeResult, error) {
	workers := o.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(frontier)))
	l := &level{t: t, menu: menu, frontier: frontier, o: o, expands: expands, found: found,
		results: make([]seedrun.NodeResult, len(frontier)), errAt: len(frontier), running: make([]runningNode, workers)}
	var wg sync.WaitGroup
	for w := range workers {
		if o.Isolate != nil {
			wg.Go(func() {
				l.workIsolated(isolate.NewQueue(*o.Isolate, t, seedrun.Options{Check: o.Check, Strict: o.Strict}), workers)
			})
			continue
		}
		wg.Go(func() { l.work(&l.running[w]) })
	}
	if o.OnProgress == nil && (o.HangAfter <= 0 || o.Isolate != nil) {
		wg.Wait()
		return l.results, l.firstErr
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(200 * time.Millisecond) // display and watchdog only: results are by index
	defer tick.Stop()
	for {
		select {
		case <-done:
			if o.OnProgress != nil {
				o.OnProgress(before+len(frontier), before+len(frontier))
			}
			return l.results, l.firstErr
		case <-tick.C:
			if o.OnProgress != nil {
				o.OnProgress(before+int(l.finished.Load()), before+len(frontier))
			}
			if o.Isolate != nil {
				continue // a hung schedule is its worker's finding
			}
			if err := l.hung(); err != nil {
				return nil, err
			}
		}
	}
}

// level is one level's exploration, shared by its workers.
type level struct {
	t        seedrun.Target
	menu     schedule.Menu
	frontier []frontierNode
	o        ExhaustOptions
	expands  bool
	found    func(seedrun.Outcome)
	results  []seedrun.NodeResult

	next, finished atomic.Int64
	reported       atomic.Bool
	halt           atomic.Bool // a schedule hung: take no more
	running        []runningNode

	mu       sync.Mutex
	firstErr error
	errAt    int // the error of the lowest index, so the same one whatever the workers
}

// runningNode is what one worker runs: the frontier index, and since when
// (wall-clock nanoseconds; 0: between runs).
type runningNode struct{ index, since atomic.Int64 }

// work runs the level's schedules, one claimed at a time, until none is left.
func (l *level) work(r *runningNode) {
	var scratch []uint8 // this worker's memory for a run's alternatives
	for {
		i := l.next.Add(1) - 1
		if i >= int64(len(l.frontier)) || stopped(l.o.Stop) || l.halt.Load() {
			return
		}
		n := l.frontier[i]
		if !l.expands {
			n.from = -1 // the last level: its alternatives are not needed
		}
		r.index.Store(i)
		r.since.Store(time.Now().UnixNano())
		out, alts, err := runNode(l.t, l.menu, n, l.o, false, scratch)
		r.since.Store(0)
		scratch = alts
		if err != nil {
			l.mu.Lock()
			if int(i) < l.errAt {
				l.firstErr, l.errAt = err, int(i)
			}
			l.mu.Unlock()
		}
		alts = slices.Clone(alts) // kept for the level: no spare capacity
		l.results[i] = seedrun.NodeResult{Ran: true, Failed: err == nil && out.Failed(), Hash: seedrun.ExecutionKey(out), Events: out.Events, Alts: alts}
		if l.results[i].Failed && l.found != nil && l.reported.CompareAndSwap(false, true) {
			if x, _, err := runNode(l.t, l.menu, n, l.o, true, nil); err == nil {
				l.found(x)
			}
		}
		l.finished.Add(1)
	}
}

// workIsolated runs the level's schedules in worker processes, a chunk at
// a time, two chunks queued at the worker so that it never waits.
func (l *level) workIsolated(r *isolate.Queue, workers int) {
	defer r.Close()
	chunk := max(1, min(64, len(l.frontier)/(16*workers)))
	var inflight []int // first index of each chunk queued, in order
	for {
		if lo := int(l.next.Add(int64(chunk))) - chunk; lo < len(l.frontier) && !stopped(l.o.Stop) && !l.halt.Load() {
			if err := r.Send(l.nodesJob(lo, min(lo+chunk, len(l.frontier)))); err != nil {
				l.failAt(lo, err)
				return
			}
			if inflight = append(inflight, lo); len(inflight) < 2 {
				continue
			}
		}
		if len(inflight) == 0 {
			return
		}
		lo := inflight[0]
		inflight = inflight[1:]
		rs, err := r.Collect(l.o.Stop)
		for k, x := range rs {
			l.record(lo+k, x)
		}
		if err != nil {
			l.failAt(lo+len(rs), err)
			return
		}
		if stopped(l.o.Stop) {
			return // the jobs queued went with the worker
		}
	}
}

// nodesJob is the job of the level's schedules lo..hi-1.
func (l *level) nodesJob(lo, hi int) isolate.Job {
	nodes := make([]isolate.NodeJob, 0, hi-lo)
	for _, n := range l.frontier[lo:hi] {
		if !l.expands {
			n.from = -1 // the last level: its alternatives are not needed
		}
		nodes = append(nodes, isolate.NodeJob{Dev: n.deviations(), From: n.from})
	}
	return isolate.NodesJob(l.t, seedrun.Options{Check: l.o.Check, Strict: l.o.Strict}, &l.menu, nodes)
}

// record keeps schedule i's result from a worker, and hands the level's
// first failing one found over (OnFound).
func (l *level) record(i int, x isolate.Result) {
	if x.Err != nil {
		l.failAt(i, x.Err)
		return
	}
	l.results[i] = x.Node
	if x.Node.Failed && l.found != nil && l.reported.CompareAndSwap(false, true) {
		if out, err := counterexample(l.t, l.menu, l.frontier[i], x.Node, l.o); err == nil {
			l.found(out)
		}
	}
	l.finished.Add(1)
}

// failAt keeps err if it is of the lowest index yet.
func (l *level) failAt(i int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < l.errAt {
		l.firstErr, l.errAt = err, i
	}
}

// hung is the HangError of a schedule that has run for longer than
// HangAfter, if one has; the other workers then take no more.
func (l *level) hung() error {
	if l.o.HangAfter <= 0 {
		return nil
	}
	now := time.Now().UnixNano()
	for w := range l.running {
		r := &l.running[w]
		since := r.since.Load()
		if since == 0 || time.Duration(now-since) <= l.o.HangAfter {
			continue
		}
		l.halt.Store(true)
		s := schedule.Schedule{Menu: l.menu, Deviations: l.frontier[r.index.Load()].deviations()}
		return &HangError{Outcome: hangOutcome(l.t, s, l.o), After: l.o.HangAfter}
	}
	return nil
}

// HangError is a schedule whose run did not finish within HangAfter of
// wall-clock time: the variant loops without calling its Env, which the
// simulator cannot interrupt. Outcome is the finding (a hang) with the
// schedule, to write as a repro and replay isolated; the run's goroutine
// is left behind, spinning.
type HangError struct {
	Outcome seedrun.Outcome
	After   time.Duration
}

func (e *HangError) Error() string {
	return fmt.Sprintf("a schedule with %s ran for more than %s of wall-clock time: %s", reports.Plural(e.Outcome.Schedule.Faults(), "fault"), e.After, e.Outcome.Schedule)
}

// hangOutcome is schedule s's finding when its run hung.
func hangOutcome(t seedrun.Target, s schedule.Schedule, o ExhaustOptions) seedrun.Outcome {
	out := seedrun.FailureOutcome(t, schedule.ExploreSeed, t.Plan, seedrun.Options{Check: o.Check, Strict: o.Strict}, model.Hang,
		fmt.Sprintf("the run did not finish in %s of wall-clock time: a loop that never calls its Env?", o.HangAfter))
	out.Schedule = &s
	return out
}

// runNode runs one schedule, and returns the alternatives at its branching
// points from n.from on; keep keeps its history (a counterexample's).
// The alternatives are recorded into scratch's memory (nil: new memory).
func runNode(t seedrun.Target, menu schedule.Menu, n frontierNode, o ExhaustOptions, keep bool, scratch []uint8) (seedrun.Outcome, []uint8, error) {
	opt := seedrun.Options{Check: o.Check, Strict: o.Strict, Keep: keep}
	return seedrun.RunNode(t, schedule.Schedule{Menu: menu, Deviations: n.deviations()}, n.from, opt, scratch)
}
