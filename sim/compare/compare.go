// Package compare fills the variant × fault-class matrix (Compare): a
// sweep per cell, the cost of each assumption (seeds drawn to break it
// alone), a bounded exploration per variant and the minimised first
// counterexample of each failing cell, in this process or in worker
// processes that every cell shares.
//
// It imports sweep, exhaust, minimize, isolate, seedrun, sim/envelope
// and reports.
package compare

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/exp/stats"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/exhaust"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/minimize"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// CompareMinimizeRuns bounds the minimisation of each failing cell's first
// counterexample: enough to drop most of a swarm plan, small enough that a
// matrix of a hundred failing cells still finishes in minutes.
const CompareMinimizeRuns = 300

// CompareOptions say which matrix to fill and how hard to look.
type CompareOptions struct {
	Variants []algorithm.Variant // rows, in this order (the CLI passes variants.All())
	Classes  []faults.Class      // columns, in this order; empty: faults.Classes
	Seeds    int                 // seeds per cell, From..From+Seeds-1; 0 is an error
	From     uint64              // the first seed of every cell; 0: seed 1
	// CostSeeds, when positive, adds the cost table: per variant and each
	// assumption it makes, seeds 1..CostSeeds drawn to break it alone, every
	// fault class allowed.
	CostSeeds int
	Config    sim.Config // the world every cell starts from
	// Pin lists the fields of the world no cell draws: Config gives them.
	// Each cell draws the others its class's bugs live in (envelope.DefaultWorld of
	// the class), the cost table all of them.
	Pin      []envelope.WorldField
	Parallel int // workers per cell's sweep and for minimising; 0: every core
	// Minimize shrinks the first counterexample of each failing cell (at
	// most CompareMinimizeRuns runs) and records its size in the cell.
	Minimize bool
	// Exhaust, when positive, adds the systematic exploration: per
	// variant, every schedule of SmallWorld(3, 2, 1) with at most this
	// many faults inside its envelope (Exhaust, every level run).
	Exhaust int
	// OnCell, if set, sees every cell once it is complete (minimised too),
	// in row-major matrix order, on the goroutine that called Compare.
	OnCell func(CellResult)
	// Isolate, when set, runs every seed (and schedule, and minimisation's
	// candidate) in worker processes, as a sweep does (Isolation): a
	// variant that crashes, hangs, exhausts memory or misuses the Env
	// fails the seed with that finding (an abort, A, in the matrix), and
	// the comparison goes on. One pool of workers serves every cell.
	Isolate *isolate.Isolation
}

// CellResult is one finished cell with what a report needs beyond the
// matrix: the first failing run, with its History, and its minimisation.
type CellResult struct {
	Variant string
	Target  seedrun.Target // the cell's target (one class)
	Cell    reports.Cell
	First   *seedrun.Outcome         // the first failing run, History kept; nil when none failed
	Minimal *minimize.MinimizeResult // nil unless Minimize and First != nil
}

// Compare runs every variant against every fault class, Seeds seeds per cell
// (the same seeds in every cell), and fills the comparison matrix. Every run
// is deterministic and sweeps report in seed order, so the same options give
// the same matrix whatever Parallel is.
//
// Each row's metrics pool all of the variant's runs, every class included:
// grants per minute of simulated time, the median and 99th percentile
// (golang.org/x/exp/stats.Quantiles) of every granted acquire's latency,
// the mean availability of the runs, and messages per grant.
func Compare(opts CompareOptions) (reports.Matrix, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return reports.Matrix{}, err
	}
	m := reports.Matrix{Seeds: opts.Seeds, Classes: opts.Classes}
	if opts.Isolate != nil {
		release, other, err := opts.contain()
		if err != nil || other {
			return m, err
		}
		defer release()
	}
	if opts.CostSeeds > 0 {
		m.CostSeeds, m.Assumptions = opts.CostSeeds, costColumns(opts.Variants)
	}
	for _, v := range opts.Variants {
		row, err := compareRow(v, opts)
		if err != nil {
			return reports.Matrix{}, err
		}
		if m.CostSeeds > 0 {
			if row.Costs, err = compareCosts(v, m.Assumptions, opts); err != nil {
				return reports.Matrix{}, err
			}
		}
		if opts.Exhaust > 0 {
			if row.Bounded, err = compareBounded(v, opts); err != nil {
				return reports.Matrix{}, err
			}
		}
		m.Rows = append(m.Rows, row)
	}
	return m, nil
}

// contain gives opts.Isolate the pool of workers every cell shares, whose
// workers serve any of the variants (Contain); other: this process is a
// worker for another call.
func (o *CompareOptions) contain() (release func(), other bool, err error) {
	iso, release, other, err := isolate.Contain(*o.Isolate, o.Variants, nil)
	if err != nil || other {
		return nil, other, err
	}
	o.Isolate = &iso
	return release, false, nil
}

// isolation is opts.Isolate for one sweep whose metrics the caller pools
// (sink: nil for none).
func (o CompareOptions) isolation(sink *isolate.MetricsSink) *isolate.Isolation {
	if o.Isolate == nil {
		return nil
	}
	iso := o.Isolate.WithMetrics(sink)
	return &iso
}

// compareBounded is v's systematic exploration of the small world.
func compareBounded(v algorithm.Variant, opts CompareOptions) (*reports.Bounded, error) {
	t := seedrun.Target{Variant: v, Config: exhaust.SmallWorld(3, 2, 1)}
	res, err := exhaust.Exhaust(t, exhaust.ExhaustOptions{MaxFaults: opts.Exhaust, Parallel: opts.Parallel, KeepGoing: true, Isolate: opts.Isolate})
	if err != nil {
		return nil, fmt.Errorf("compare %s, exhaust: %w", v.Name, err)
	}
	b := &reports.Bounded{World: res.World(), MaxFaults: opts.Exhaust, Complete: res.Complete}
	if x := res.Counterexample; x != nil {
		b.Command = fmt.Sprintf("%s explore -variant %s -max-faults %d", seedrun.CommandPrefix, v.Name, x.Schedule.Faults())
	}
	for _, l := range res.Levels {
		b.Levels = append(b.Levels, reports.BoundedLevel{Faults: l.Faults, Schedules: l.Schedules, Failing: l.Failing})
	}
	if x := res.Counterexample; x != nil {
		b.Faults = x.Schedule.Faults()
		b.Counterexample = x.Schedule.String() + "; " + x.Verdict.Violations[0].Story
	}
	return b, nil
}

// costColumns are the assumptions some variant makes, in
// algorithm.EveryAssumption order.
func costColumns(vs []algorithm.Variant) []string {
	var out []string
	for _, n := range algorithm.EveryAssumption {
		for _, v := range vs {
			if v.Envelope.Assumes(n) {
				out = append(out, string(n))
				break
			}
		}
	}
	return out
}

// compareCosts fills one variant's costs: for each column it assumes,
// seeds 1..CostSeeds drawn to break that assumption alone.
func compareCosts(v algorithm.Variant, columns []string, opts CompareOptions) ([]reports.Cost, error) {
	out := make([]reports.Cost, len(columns))
	for i, name := range columns {
		n := algorithm.Assumption(name)
		out[i] = reports.NewCost(name, v.Envelope.Assumes(n))
		if !out[i].Assumed {
			continue
		}
		all := []faults.Class{faults.ClassAll}
		t := seedrun.Target{Variant: v, Config: opts.Config, Classes: all, Beyond: []algorithm.Assumption{n}, World: opts.world(all)}
		c := &out[i]
		_, err := sweep.Sweep(t, sweep.SweepOptions{From: 1, Count: opts.CostSeeds, Parallel: opts.Parallel, KeepGoing: true, Isolate: opts.Isolate,
			OnOutcome: func(o seedrun.Outcome) {
				broke := slices.ContainsFunc(o.Breaches, func(b envelope.Breach) bool { return b.Assumption == n })
				c.Record(int64(o.Seed), runOf(o), broke)
				if c.Story == "" && c.FirstSeed == int64(o.Seed) {
					c.Story = firstStory(o, false)
				}
			}})
		if err != nil {
			return nil, fmt.Errorf("compare %s beyond %s: %w", v.Name, n, err)
		}
		if c.FirstSeed >= 0 {
			c.Replay = seedrun.ReplayCommand(t, uint64(c.FirstSeed))
		}
	}
	return out, nil
}

// firstStory is o's first bug (bug) or first expected violation, with the
// breach before it, in words.
func firstStory(o seedrun.Outcome, bug bool) string {
	for _, f := range o.Findings {
		switch {
		case bug && f.Bug():
			return fmt.Sprintf("%s at %s: %s", f.Kind, model.Seconds(f.Time), f.Story)
		case !bug && f.Promised && f.Breach != nil:
			return fmt.Sprintf("%s at %s: %s, after %s", f.Kind, model.Seconds(f.Time), f.Story, f.Breach)
		}
	}
	return ""
}

// runOf is an outcome as a matrix counts it.
func runOf(o seedrun.Outcome) reports.Run {
	r := reports.Run{Outside: !o.Inside()}
	for _, f := range o.Findings {
		switch {
		case f.Bug():
			r.Bugs = append(r.Bugs, f.Kind)
		case f.Promised:
			r.Expected = append(r.Expected, f.Kind)
		default:
			r.Unpromised = true
		}
	}
	return r
}

// excludedText says which assumptions leave a class no fault, in words.
func excludedText(t seedrun.Target, class faults.Class) string {
	var words []string
	for _, b := range t.SafetyBounds().Excludes(class) {
		switch b {
		case faults.BreakClockJumps:
			words = append(words, "clock jumps")
		case faults.BreakDurableNodes:
			words = append(words, "data loss")
		case faults.BreakFixedTopology:
			words = append(words, "topology changes")
		default:
			words = append(words, string(b))
		}
	}
	return strings.Join(words, ", ")
}

// world is what a cell of these classes draws: their default, less Pin.
func (o CompareOptions) world(classes []faults.Class) []envelope.WorldField {
	return slices.DeleteFunc(envelope.DefaultWorld(classes), func(f envelope.WorldField) bool { return slices.Contains(o.Pin, f) })
}

func (o CompareOptions) withDefaults() (CompareOptions, error) {
	if len(o.Variants) == 0 {
		return o, errors.New("compare: no variants to compare (the CLI passes variants.All())")
	}
	if len(o.Classes) == 0 {
		o.Classes = slices.Clone(faults.Classes)
	}
	switch {
	case o.Seeds < 1:
		return o, fmt.Errorf("compare: %d seeds per cell; want at least 1", o.Seeds)
	case o.CostSeeds < 0:
		return o, fmt.Errorf("compare: %d seeds per cost is negative", o.CostSeeds)
	case o.Parallel < 0:
		return o, fmt.Errorf("compare: parallel %d is negative", o.Parallel)
	}
	for _, v := range o.Variants {
		t := seedrun.Target{Variant: v, Config: o.Config}
		if err := t.Validate(); err != nil {
			return o, fmt.Errorf("compare: %w", err)
		}
	}
	return o, nil
}

// compareRow fills one variant's row: its cells, then its metrics.
func compareRow(v algorithm.Variant, opts CompareOptions) (reports.Row, error) {
	row := reports.Row{Variant: v.Name, Summary: v.Summary, Envelope: v.Envelope.String()}
	var pool metricsPool
	results := make([]CellResult, len(opts.Classes))
	var err error
	for i, class := range opts.Classes {
		if results[i], err = sweepCell(v, class, opts, &pool); err != nil {
			return reports.Row{}, err
		}
	}
	if opts.Minimize {
		if err := minimizeCells(results, opts.Parallel, opts.Isolate); err != nil {
			return reports.Row{}, err
		}
	}
	for _, r := range results {
		row.Cells = append(row.Cells, r.Cell)
		if opts.OnCell != nil {
			opts.OnCell(r)
		}
	}
	row.Metrics = pool.metrics()
	return row, nil
}

// sweepCell runs one cell's seeds, recording each verdict in seed order.
func sweepCell(v algorithm.Variant, class faults.Class, opts CompareOptions, pool *metricsPool) (CellResult, error) {
	classes := []faults.Class{class}
	t := seedrun.Target{Variant: v, Config: opts.Config, Classes: classes, World: opts.world(classes)}
	res := CellResult{Variant: v.Name, Target: t, Cell: reports.NewCell(class)}
	res.Cell.Excluded = excludedText(t, class)
	run := seedrun.DefaultOptions()
	run.Keep = true                  // the metrics pool reads every grant's latency
	sink := new(isolate.MetricsSink) // where isolated runs' metrics come back, their histories left in the workers
	_, err := sweep.Sweep(t, sweep.SweepOptions{From: max(opts.From, 1), Count: opts.Seeds, Parallel: opts.Parallel, KeepGoing: true, Run: run,
		Isolate: opts.isolation(sink),
		OnOutcome: func(o seedrun.Outcome) {
			m, ok := sink.Take(o.Seed)
			if !ok {
				m = isolate.MetricsOf(o)
			}
			pool.add(m)
			res.Cell.Record(int64(o.Seed), runOf(o))
			if res.Cell.Story == "" && res.Cell.FirstSeed == int64(o.Seed) {
				res.Cell.Story = firstStory(o, true)
			}
			if o.Failed() && res.First == nil {
				res.First = withHistory(t, o, run)
			}
		}})
	if err != nil {
		return CellResult{}, fmt.Errorf("compare %s × %s: %w", v.Name, class, err)
	}
	if res.First != nil {
		res.Cell.Replay = seedrun.ReplayCommand(t, res.First.Seed)
	}
	return res, nil
}

// withHistory is o, with its history: run again here, unless it has it,
// or must not run in this process (its worker's finding).
func withHistory(t seedrun.Target, o seedrun.Outcome, run seedrun.Options) *seedrun.Outcome {
	if len(o.History.Clients) == 0 && !o.ProcessDeath() {
		if again, err := seedrun.RunPlan(t, o.Seed, o.Plan, run); err == nil {
			o = again
		}
	}
	return &o
}

// minimizeCells shrinks every failing cell's first counterexample, cells in
// parallel (each minimisation is sequential and deterministic).
func minimizeCells(results []CellResult, parallel int, iso *isolate.Isolation) error {
	if parallel == 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, len(results))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range results {
		if results[i].First == nil || results[i].First.ProcessDeath() {
			continue // nothing a plan shrinks: the lock's own code fails
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &results[i]
			min, err := minimize.MinimizeWith(r.Target, r.First.Seed, r.First.Plan, minimizeKind(*r.First),
				minimize.MinimizeOptions{MaxRuns: CompareMinimizeRuns, Isolate: iso})
			var finding *isolate.FindingError
			if errors.As(err, &finding) {
				return // nothing to shrink: it failed another way in its worker
			}
			if err != nil {
				errs[i] = fmt.Errorf("compare %s × %s: %w", r.Variant, r.Cell.Class, err)
				return
			}
			r.Minimal = &min
			r.Cell.MinimalSize = min.SizeAfter
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// minimizeKind is the violation a minimisation keeps: the first bug of a
// safety property if there is one (that is the bug worth showing), else the
// first bug, else (a strict failure) the first violation.
func minimizeKind(o seedrun.Outcome) model.ViolationKind {
	for _, f := range o.Findings {
		if f.Bug() && f.Kind.IsSafety() {
			return f.Kind
		}
	}
	for _, f := range o.Findings {
		if f.Bug() {
			return f.Kind
		}
	}
	return o.Verdict.Violations[0].Kind
}

// metricsPool gathers a variant's runs, in seed and class order, so the
// float sums it makes are the same on every machine.
type metricsPool struct {
	runs         int
	grants       int
	messages     int64
	trueTimeNS   int64
	availability float64   // sum over runs
	latenciesNS  []float64 // every granted acquire, call to return
}

func (p *metricsPool) add(m isolate.RunMetrics) {
	p.runs++
	p.grants += m.Grants
	p.messages += m.Messages
	p.trueTimeNS += m.EndNS
	p.availability += m.Availability
	for _, l := range m.LatenciesNS {
		p.latenciesNS = append(p.latenciesNS, float64(l))
	}
}

func (p *metricsPool) metrics() reports.VariantMetrics {
	var m reports.VariantMetrics
	if p.runs == 0 {
		return m
	}
	m.Availability = p.availability / float64(p.runs)
	if p.trueTimeNS > 0 {
		m.GrantsPerMinute = float64(p.grants) / (float64(p.trueTimeNS) / 60e9)
	}
	if p.grants > 0 {
		m.MessagesPerGrant = float64(p.messages) / float64(p.grants)
	}
	if len(p.latenciesNS) > 0 {
		q := stats.Quantiles(p.latenciesNS, 0.5, 0.99)
		m.AcquireP50ms, m.AcquireP99ms = q[0]/1e6, q[1]/1e6
	}
	return m
}

// CompareMarkdown writes the matrix as reports.Markdown does, under a note
// that names the command that generated it, so a committed matrix says how
// to regenerate it. command is the whole command line ("go run ./cmd/locksim
// compare -n 30 -md reports/VARIANTS.md"). Nothing in it depends on the
// wall clock or the machine.
func CompareMarkdown(w io.Writer, m reports.Matrix, command string) error {
	if _, err := fmt.Fprintf(w, "<!-- Generated by locksim; do not edit. Regenerate with:\n     %s\n-->\n\n"+
		"> Generated by `%s`. Every run is deterministic: the same command gives this file byte for byte.\n\n",
		command, command); err != nil {
		return err
	}
	return reports.Markdown(w, m)
}

// RealLibrariesMarker starts the part of reports/VARIANTS.md that the
// compare command does not write: the verdicts of real Redis libraries,
// run unmodified (examples/redislocks TestVerdicts -update-variants).
const RealLibrariesMarker = "<!-- real libraries: examples/redislocks TestVerdicts -->"

// EtcdMarker starts the part of reports/VARIANTS.md about etcd's own
// Mutex (the etcdv3 module's sweeps), after the Redis libraries' part,
// which TestVerdicts rewrites up to it.
const EtcdMarker = "<!-- etcd's Mutex: the etcdv3 module's TestMutexSweep -->"

// CheckWorlds reports whether some cell of the comparison (or of its cost
// table) may draw a world past the limits, as Target.CheckWorlds does for
// one target, before its first seed.
func (o CompareOptions) CheckWorlds() error {
	classes := o.Classes
	if len(classes) == 0 {
		classes = faults.Classes
	}
	each := make([][]faults.Class, 0, len(classes)+1)
	for _, c := range classes {
		each = append(each, []faults.Class{c})
	}
	if o.CostSeeds > 0 {
		each = append(each, []faults.Class{faults.ClassAll})
	}
	for _, cs := range each {
		if err := (seedrun.Target{Config: o.Config, Classes: cs, World: o.world(cs)}).CheckWorlds(); err != nil {
			return err
		}
	}
	return nil
}
