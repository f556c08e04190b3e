// Package sweep runs many seeds of a target on every core (Sweep), in
// this process or in worker processes (package isolate), and delivers
// their outcomes in seed order, so that the result does not depend on the
// cores. A sweep keeps a journal that a killed sweep resumes from
// (journal.go), and reports itself as data that the shards of one sweep
// are merged from (SweepReport, MergeShards: shards.go).
//
// It imports seedrun, isolate and sim/envelope.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/seedrun"
)

// SweepOptions say which seeds to run and how.
type SweepOptions struct {
	From  uint64 // first seed
	Count int    // number of seeds
	// Shard K of N (0-based) runs only the seeds whose offset from From is
	// K modulo N; the zero value (N 0) runs them all.
	ShardIndex, ShardCount int
	Parallel               int  // workers; 0 means every core
	KeepGoing              bool // false: stop at the first failing seed StopOn names (in seed order)
	// StopOn says which failure stops a sweep that does not keep going:
	// by default (StopOnSafety) the first that is not only liveness, so a
	// starvation met first does not hide a safety bug a few seeds later;
	// StopOnAny, the first of any kind.
	StopOn StopPolicy
	// KeepFailures is how many failing outcomes the result keeps (the
	// first ones, in seed order); 0 means DefaultKeepFailures. Every
	// failure is still counted and still seen by OnOutcome, so a long
	// keep-going sweep streams its failures instead of holding them.
	KeepFailures int
	Run          seedrun.Options
	// OnOutcome, if set, sees every outcome in seed order, whatever the
	// parallelism, on the goroutine that called Sweep.
	OnOutcome func(seedrun.Outcome)
	// Stop, when closed, ends the sweep early: no worker claims another
	// seed, and the result holds every seed before the first that did not
	// run (SweepResult.Interrupted, NextSeed). nil: run to the end.
	Stop <-chan struct{}
	// Isolate, when set, runs the seeds in worker processes (Isolation):
	// a seed that crashes, hangs or exhausts memory is a finding, and the
	// sweep goes on. Outcomes of seeds without findings then carry only
	// Seed, Hash, Events and Breaches; a failing seed runs again in this
	// process, so its outcome is whole.
	Isolate *isolate.Isolation
	// Journal, when set, is a file the sweep appends its progress to
	// (journal.go), so a sweep killed at any instant loses nothing. With
	// Resume, the sweep first reads what the journal holds of the same
	// sweep, delivers its failures to OnOutcome again, and runs only the
	// seeds after its last checkpoint; the result is the uninterrupted
	// sweep's (outcomes read back from the journal have no history).
	Journal string
	Resume  bool
}

// sweepResult is one seed's outcome in a sweep, by its index.
type sweepResult struct {
	i   int
	out seedrun.Outcome
	err error
}

// stopsAt reports whether outcome out ends a sweep of these options.
func (o SweepOptions) stopsAt(out seedrun.Outcome) bool { return !o.KeepGoing && o.StopOn.stops(out) }

// StopPolicy is which failing seed stops a sweep (SweepOptions.StopOn).
type StopPolicy uint8

const (
	StopOnSafety StopPolicy = iota // a bug that is not only liveness: safety, a panic, a livelock
	StopOnAny                      // any failure
)

// ParseStopPolicy reads "safety" or "any".
func ParseStopPolicy(s string) (StopPolicy, error) {
	switch s {
	case "safety":
		return StopOnSafety, nil
	case "any":
		return StopOnAny, nil
	}
	return 0, fmt.Errorf("stop-on %q is not safety or any", s)
}

func (p StopPolicy) String() string {
	if p == StopOnAny {
		return "any"
	}
	return "safety"
}

// stops reports whether failing outcome o stops a sweep under p.
func (p StopPolicy) stops(o seedrun.Outcome) bool {
	return o.Failed() && (p == StopOnAny || !o.OnlyLiveness())
}

// DefaultKeepFailures bounds the failing outcomes a SweepResult holds.
const DefaultKeepFailures = 100

// DefaultSweepSeeds is how many seeds a sweep runs unless told otherwise
// (locksim sweep -n): enough for the mutation suite's mistakes to show
// (variants/mutants_test.go), a few seconds on two cores.
const DefaultSweepSeeds = 1000

// SweepResult is what a sweep found. Only the first failing outcomes are
// kept, so a sweep over a million seeds holds little memory however many
// of them fail.
type SweepResult struct {
	Runs   int
	Events int64
	Failed int // failing seeds (Outcome.Failed), all of them
	// LivenessFailed counts the failing seeds whose failures were all of
	// liveness (a sweep stopping on safety runs past them).
	LivenessFailed int
	Failures       []seedrun.Outcome // the first KeepFailures of them, in seed order
	// Expected counts the seeds whose violations of promised properties all
	// came after the run broke an assumption; Unpromised those that broke
	// only properties the variant does not promise (neither fails a sweep
	// unless Strict). Inside counts the seeds that broke no assumption.
	Expected, Unpromised, Inside int
	// Interrupted: Stop closed before every seed had run. Then NextSeed is
	// the first seed whose outcome was not delivered: a sweep from there
	// (same shard) resumes it.
	Interrupted bool
	NextSeed    uint64
	// ExpectedBy counts the expected seeds by the assumption whose breach
	// their first expected finding came after.
	ExpectedBy map[algorithm.Assumption]int `json:",omitempty"`
}

// Len is how many seeds the options select, computed, not listed: a sweep
// of any length runs in constant memory.
func (o SweepOptions) Len() int {
	if o.ShardCount <= 0 {
		return o.Count
	}
	if o.Count <= o.ShardIndex {
		return 0
	}
	return (o.Count-o.ShardIndex-1)/o.ShardCount + 1
}

// SeedAt is the i-th seed the options select (0 <= i < Len()).
func (o SweepOptions) SeedAt(i int) uint64 {
	if o.ShardCount <= 0 {
		return o.From + uint64(i)
	}
	return o.From + uint64(o.ShardIndex) + uint64(i)*uint64(o.ShardCount)
}

// IndexOf is SeedAt's inverse: seed's place among the seeds the options
// select, and whether they select it.
func (o SweepOptions) IndexOf(seed uint64) (int, bool) {
	if seed < o.From || seed-o.From >= uint64(o.Count) {
		return 0, false
	}
	off := seed - o.From
	n := uint64(max(1, o.ShardCount))
	if off%n != uint64(max(0, o.ShardIndex)) {
		return 0, false
	}
	return int(off / n), true
}

// Seeds lists the seeds the options select, in order. Only for small
// ranges: Len and SeedAt do not allocate.
func (o SweepOptions) Seeds() []uint64 {
	out := make([]uint64, o.Len())
	for i := range out {
		out[i] = o.SeedAt(i)
	}
	return out
}

func (o SweepOptions) validate() error {
	switch {
	case o.Count < 0:
		return fmt.Errorf("sweep: seed count %d is negative", o.Count)
	case o.KeepFailures < 0:
		return fmt.Errorf("sweep: keep-failures %d is negative", o.KeepFailures)
	case o.Parallel < 0:
		return fmt.Errorf("sweep: parallel %d is negative", o.Parallel)
	case o.ShardCount < 0 || (o.ShardCount > 0 && (o.ShardIndex < 0 || o.ShardIndex >= o.ShardCount)):
		return fmt.Errorf("sweep: shard %d/%d is not K/N with 0 <= K < N", o.ShardIndex, o.ShardCount)
	}
	return nil
}

// Sweep runs many seeds on every core. Each seed is deterministic;
// parallelism only spreads seeds across workers, and outcomes are delivered
// and reported in seed order, so the result does not depend on the core count.
func Sweep(t seedrun.Target, o SweepOptions) (SweepResult, error) {
	if err := t.Validate(); err != nil {
		return SweepResult{}, err
	}
	if err := o.validate(); err != nil {
		return SweepResult{}, err
	}
	sw := &sweeper{t: t, o: o, n: o.Len(), keep: o.KeepFailures}
	if sw.keep == 0 {
		sw.keep = DefaultKeepFailures
	}
	if o.Isolate != nil {
		if err := o.Isolate.Validate(); err != nil {
			return SweepResult{}, err
		}
		sw.key = isolate.Fingerprint("sweep", t, o.Run)
		if isolate.ServeIfWorker(sw.key, t) {
			return SweepResult{}, nil // a worker for another call runs none of this one
		}
	}
	if o.Journal != "" {
		from, err := sw.openJournal()
		if err != nil || from.done {
			return sw.res, err
		}
	}
	sw.start()
	sw.collect()
	return sw.finish()
}

// sweeper is one Sweep in progress.
//
// Workers claim chunks of consecutive seeds from a shared counter and hand
// each chunk's outcomes over in one batch: a seed takes about a
// millisecond, and waking the collecting goroutine (or a feeder) once per
// seed cost the sweep ~8% of a core in scheduler wake-ups and spinning
// (docs/PERFORMANCE.md). A worker stops claiming once a seed at or before
// its next one has failed (unless KeepGoing), and flushes its batch at
// once when its own seed fails: seeds after the first failure are never
// needed.
type sweeper struct {
	t          seedrun.Target
	o          SweepOptions
	n, keep    int
	key        string // the isolated workers' fingerprint
	j          *journal
	first      int // the first seed index to run (after a resumed journal)
	chunk      int
	next       atomic.Int64 // the next unclaimed seed index
	firstStop  atomic.Int64 // lowest index that failed or erred; n: none
	results    chan []sweepResult
	res        SweepResult
	nextOut    int // the next index to deliver
	done       bool
	firstError error
}

// openJournal opens the journal and takes over what it held.
func (sw *sweeper) openJournal() (resumed, error) {
	j, from, err := openJournal(sw.o.Journal, sw.t, sw.o, sw.o.Resume)
	if err != nil {
		return from, err
	}
	sw.j, sw.res, sw.first = j, restore(sw.t, sw.o, from, sw.keep), from.next
	if from.done {
		return from, j.close()
	}
	return from, nil
}

// start launches the workers.
func (sw *sweeper) start() {
	workers := sw.o.Parallel
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, sw.n-sw.first))
	sw.chunk = sweepChunk(sw.n, workers)
	sw.next.Store(int64(sw.first))
	sw.firstStop.Store(int64(sw.n))
	sw.nextOut = sw.first
	sw.results = make(chan []sweepResult, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sw.o.Isolate != nil {
				iso := isolate.NewQueue(*sw.o.Isolate, sw.t, sw.o.Run)
				defer iso.Close()
				sweepIsolated(iso, sw.o, sw.claim, sw.results, sw.noteStop, sw.stopped)
				return
			}
			sw.runHere()
		}()
	}
	go func() { wg.Wait(); close(sw.results) }()
}

func (sw *sweeper) stopped() bool {
	select {
	case <-sw.o.Stop:
		return true
	default:
		return false
	}
}

func (sw *sweeper) noteStop(i int) {
	for {
		cur := sw.firstStop.Load()
		if int64(i) >= cur || sw.firstStop.CompareAndSwap(cur, int64(i)) {
			return
		}
	}
}

// claim is the next chunk of seed indexes, lo..hi-1, unless the sweep is
// over, stopped, or past its first stopping failure.
func (sw *sweeper) claim() (lo, hi int, ok bool) {
	lo = int(sw.next.Add(int64(sw.chunk))) - sw.chunk
	if lo >= sw.n || int64(lo) > sw.firstStop.Load() || (sw.o.Stop != nil && sw.stopped()) {
		return 0, 0, false
	}
	return lo, min(lo+sw.chunk, sw.n), true
}

// runHere is one worker in this process: chunks until none is left.
func (sw *sweeper) runHere() {
	for {
		lo, hi, ok := sw.claim()
		if !ok {
			return
		}
		batch := make([]sweepResult, 0, hi-lo)
		for i := lo; i < hi && int64(i) <= sw.firstStop.Load(); i++ {
			if sw.o.Stop != nil && sw.stopped() {
				break
			}
			out, err := seedrun.RunSeed(sw.t, sw.o.SeedAt(i), sw.o.Run)
			batch = append(batch, sweepResult{i, out, err})
			if err != nil || sw.o.stopsAt(out) {
				sw.noteStop(i)
				break
			}
		}
		sw.results <- batch
	}
}

// collect delivers the outcomes in seed order: outcome i only after
// 0..i-1, whatever order the workers hand them over in.
func (sw *sweeper) collect() {
	pending := map[int]sweepResult{}
	for batch := range sw.results {
		for _, r := range batch {
			pending[r.i] = r
		}
		for !sw.done {
			p, ok := pending[sw.nextOut]
			if !ok {
				break
			}
			delete(pending, sw.nextOut)
			sw.deliver(p)
		}
		if sw.j != nil {
			sw.j.progress(sw.nextOut, false, sw.res, false)
		}
	}
}

// deliver counts outcome p, the next in seed order, and hands it over.
func (sw *sweeper) deliver(p sweepResult) {
	if p.err != nil {
		sw.firstError, sw.done = p.err, true // not delivered: a resumed sweep runs it again
		return
	}
	sw.nextOut++
	res := &sw.res
	res.Runs++
	res.Events += p.out.Events
	res.count(p.out)
	if sw.o.OnOutcome != nil {
		sw.o.OnOutcome(p.out)
	}
	if !p.out.Failed() {
		return
	}
	if sw.j != nil {
		sw.j.failure(sw.nextOut-1, p.out)
	}
	res.Failed++
	if p.out.OnlyLiveness() {
		res.LivenessFailed++
	}
	if len(res.Failures) < sw.keep {
		res.Failures = append(res.Failures, p.out)
	}
	if sw.o.stopsAt(p.out) {
		sw.done = true
	}
}

// finish says whether the sweep was interrupted and closes the journal.
func (sw *sweeper) finish() (SweepResult, error) {
	if !sw.done && sw.nextOut < sw.n && sw.firstError == nil {
		// Only Stop leaves seeds undelivered without a failure: what ran
		// past the gap is dropped, so the result is a prefix of the sweep.
		sw.res.Interrupted, sw.res.NextSeed = true, sw.o.SeedAt(sw.nextOut)
	}
	if sw.j != nil {
		sw.j.progress(sw.nextOut, sw.firstError == nil && !sw.res.Interrupted, sw.res, true)
		if err := sw.j.close(); err != nil && sw.firstError == nil {
			sw.firstError = fmt.Errorf("sweep: cannot write the journal %s: %v (the results above are whole)", sw.o.Journal, err)
		}
	}
	return sw.res, sw.firstError
}

// restore is the result a journal held, its failures delivered again to
// OnOutcome in order.
func restore(t seedrun.Target, o SweepOptions, from resumed, keep int) SweepResult {
	res := from.result
	res.Failures, res.Interrupted, res.NextSeed = nil, false, 0
	for _, f := range from.failures {
		out := f.Outcome(t, nil, o.Run, true) // everything but its history and trace
		if len(res.Failures) < keep {
			res.Failures = append(res.Failures, out)
		}
		if o.OnOutcome != nil {
			o.OnOutcome(out)
		}
	}
	return res
}

// sweepIsolated is one sweep worker's loop with isolation: it keeps two
// chunks queued at its worker process, so the process never waits for the
// coordinator, and hands each chunk's outcomes over as the in-process loop
// does, up to the first that stops the sweep.
func sweepIsolated(iso *isolate.Queue, o SweepOptions, claim func() (int, int, bool), results chan<- []sweepResult, noteStop func(int), stopped func() bool) {
	var inflight []int // first seed index of each chunk queued, in order
	for {
		lo, hi, more := claim()
		if more {
			seeds := make([]uint64, 0, hi-lo)
			for i := lo; i < hi; i++ {
				seeds = append(seeds, o.SeedAt(i))
			}
			if err := iso.Send(isolate.SeedsJob(seeds)); err != nil {
				noteStop(lo)
				results <- []sweepResult{{lo, seedrun.Outcome{}, err}}
				return
			}
			inflight = append(inflight, lo)
			if len(inflight) < 2 {
				continue
			}
		}
		if len(inflight) == 0 {
			return
		}
		first := inflight[0]
		inflight = inflight[1:]
		rs, err := iso.Collect(o.Stop)
		batch := make([]sweepResult, 0, len(rs)+1)
		for k, r := range rs {
			batch = append(batch, sweepResult{first + k, r.Out, r.Err})
			if r.Err != nil || o.stopsAt(r.Out) {
				noteStop(first + k)
				break
			}
		}
		if err != nil {
			noteStop(first + len(rs))
			batch = append(batch, sweepResult{first + len(rs), seedrun.Outcome{}, err})
		}
		results <- batch
		if err != nil || (o.Stop != nil && stopped()) {
			return // the queued jobs went with the worker
		}
	}
}

// count adds o to the result's tallies of standings.
func (r *SweepResult) count(o seedrun.Outcome) {
	if o.Inside() {
		r.Inside++
	}
	switch {
	case o.Bugs() > 0:
	case o.Expected():
		r.Expected++
		for _, f := range o.Findings {
			if f.Expected() {
				if r.ExpectedBy == nil {
					r.ExpectedBy = map[algorithm.Assumption]int{}
				}
				r.ExpectedBy[f.Breach.Assumption]++
				break
			}
		}
	case o.Unpromised():
		r.Unpromised++
	}
}

// sweepChunk is how many consecutive seeds a worker claims at once: enough
// to make hand-overs rare, few enough that the last chunks still spread
// over the workers (at least 16 chunks per worker, at most 8 seeds each).
func sweepChunk(seeds, workers int) int {
	return max(1, min(8, seeds/(16*workers)))
}

// CheckSeeds checks that count seeds from seed from can be numbered: the
// last, from+count-1, must not pass the largest seed (for Forever, a
// sweep must not run out of seeds before it could count them).
func CheckSeeds(from uint64, count int) error {
	switch {
	case count == 0:
		return errors.New("no seeds to run")
	case count < 0:
		return fmt.Errorf("%d seeds is not a count", count)
	case uint64(count-1) <= math.MaxUint64-from:
		return nil
	case count == Forever:
		return fmt.Errorf("a sweep from seed %d runs out of seeds before forever: give a count of seeds", from)
	}
	return fmt.Errorf("%d seeds from seed %d pass the largest seed, %d", count, from, uint64(math.MaxUint64))
}
