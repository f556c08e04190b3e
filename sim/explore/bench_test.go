//go:build unix

// CPU time comes from getrusage, so these benchmarks (and the memory test
// beside them) build on unix only; the rest of the package's tests do not
// need them.

package explore

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/internal/cputime"
	"github.com/locksim/locksim/variants"
)

// The figures of docs/PERFORMANCE.md. Run them all once with
//
//	go test ./sim/explore -run XXX -bench . -benchtime 1x
//
// Rates are given per wall second (x/s) and per second of CPU the whole
// process used (x/cpu-s): on a shared machine only the second is stable.

var sweepMemorySeeds = flag.Int("sweep-memory-seeds", 20_000,
	"seeds BenchmarkSweepMemory sweeps (a million: go test ./sim/explore -run XXX -bench SweepMemory -sweep-memory-seeds 1000000)")

// defaultScenario is the default scenario: the post's world with
// several clients on two hosts (2 hosts × 3 threads), 3 replicas, ten
// simulated minutes, the original, under the given fault classes.
func defaultScenario(classes ...faults.Class) Target {
	c := sim.DefaultConfig()
	c.Hosts, c.ThreadsPerHost = 2, 3
	return Target{Variant: variant("original"), Config: c, Classes: classes}
}

// BenchmarkDefaultScenario runs the next seed of the default scenario under
// every fault class per iteration. checked is what a sweep pays per seed
// (run and check); sim-only leaves the checkers out.
func BenchmarkDefaultScenario(b *testing.B) {
	tg := defaultScenario(faults.ClassAll)
	b.Run("checked", func(b *testing.B) { benchChecked(b, tg) })
	b.Run("sim-only", func(b *testing.B) { benchSimOnly(b, tg) })
	// The same world without faults: the work the hand-rolled synctest
	// baseline (BenchmarkSynctestBaseline) does, for a like-for-like count.
	b.Run("sim-only-fault-free", func(b *testing.B) { benchSimOnly(b, defaultScenario(faults.ClassNone)) })
	b.Run("checked-fault-free", func(b *testing.B) { benchChecked(b, defaultScenario(faults.ClassNone)) })
}

func benchChecked(b *testing.B, tg Target) {
	benchSeeds(b, func(seed uint64) int64 {
		out, err := RunSeed(tg, seed, DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		return out.Events
	})
}

func benchSimOnly(b *testing.B, tg Target) {
	v := tg.Variant
	var buf sim.Buffers // reused from seed to seed, as a sweep worker does
	benchSeeds(b, func(seed uint64) int64 {
		res, err := sim.Run(sim.Scenario{Config: tg.Config, Variant: v, Seed: seed, Plan: tg.PlanFor(seed), Buffers: &buf})
		if err != nil {
			b.Fatal(err)
		}
		return res.Events
	})
}

// benchSeeds runs seeds 1, 2, ... one per iteration and reports seeds and
// events per wall and CPU second, and allocations per seed.
func benchSeeds(b *testing.B, run func(seed uint64) (events int64)) {
	b.ReportAllocs()
	var events int64
	var seeds uint64
	mallocs := mallocCount()
	cpu := cputime.Start()
	for b.Loop() {
		seeds++
		events += run(seeds)
	}
	cpuSeconds := cpu.Seconds()
	reportRate(b, cpuSeconds, "seeds", float64(seeds))
	reportRate(b, cpuSeconds, "events", float64(events))
	b.ReportMetric(float64(events)/float64(seeds), "events/seed")
	b.ReportMetric(float64(mallocCount()-mallocs)/float64(seeds), "allocs/seed")
}

// BenchmarkTimeToFirstCounterexample measures, for every bug of
// reports/BUGS.md, how long the default sweep (`sweep -variant original
// -faults all`, all cores; the literal reading's variant, or -beyond, for
// the entries that need it) takes to show that bug, as the catalogue
// recognises it: a sweep that meets another bug goes on, as a user with
// -keep-going would. Each iteration runs ttfcSweeps independent sweeps;
// sweep k starts at seed 1 + 10000k. The target is a median under one
// second of wall time for every entry.
func BenchmarkTimeToFirstCounterexample(b *testing.B) {
	defer TuneGC()() // as the locksim command runs its sweeps
	for _, e := range catalogue {
		b.Run(e.name, func(b *testing.B) {
			var walls []time.Duration
			var seeds []float64
			missed, k := 0, 0
			for b.Loop() {
				for range ttfcSweeps {
					wall, n, found := timeToFirst(b, e, 1+ttfcStride*uint64(k))
					k++
					walls, seeds = append(walls, wall), append(seeds, float64(n))
					if !found {
						missed++
					}
				}
			}
			ms := make([]float64, len(walls))
			for i, w := range walls {
				ms[i] = float64(w) / float64(time.Millisecond)
			}
			b.ReportMetric(median(ms), "median-ms")
			b.ReportMetric(slices.Max(ms), "max-ms")
			b.ReportMetric(median(seeds), "median-seeds")
			b.ReportMetric(float64(missed), "missed")
		})
	}
}

const (
	ttfcSweeps = 9      // independent sweeps per iteration
	ttfcStride = 10_000 // seeds between the starts of two sweeps, and the most one sweep runs
)

// timeToFirst sweeps from seed from until a run shows entry e (firstOf);
// found is false when ttfcStride seeds show none.
func timeToFirst(b *testing.B, e entry, from uint64) (wall time.Duration, seeds uint64, found bool) {
	start := time.Now()
	o, found := firstOf(b, e, from, ttfcStride)
	if !found {
		return time.Since(start), ttfcStride, false
	}
	return time.Since(start), o.Seed - from + 1, true
}

// BenchmarkSweepScaling sweeps the same seeds with one worker and with two
// in every iteration, so both see the same machine load; efficiency is the
// speed-up over the ideal (1 is perfect scaling on two cores). On a shared
// machine the wall rates depend on the cores the process gets: cores-p1 and
// cores-p2 are the CPU seconds it used per wall second, and the per-CPU
// rates show what a second worker costs in work per seed.
//
// It runs at the GOGC the locksim command sets (TuneGC) and at Go's
// default, which shows what the collector costs a sweep.
func BenchmarkSweepScaling(b *testing.B) {
	for _, gc := range []struct {
		name    string
		percent int
	}{{"command", SweepGCPercent}, {"gogc=100", 100}} {
		b.Run(gc.name, func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(gc.percent))
			sweepScaling(b)
		})
	}
}

func sweepScaling(b *testing.B) {
	tg := defaultScenario(faults.ClassAll)
	tg.Config.Duration = 2 * time.Minute
	const seeds = 200
	var wall, cpu [2]float64
	var pairs []float64 // efficiency of each back-to-back pair of sweeps
	for b.Loop() {
		var events, pairWall [2]float64
		// Alternate which sweep goes first, so a co-tenant's load that
		// comes or goes mid-pair does not always favour the same one.
		order := []int{0, 1}
		if len(pairs)%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			start, c := time.Now(), cputime.Start()
			res, err := Sweep(tg, SweepOptions{From: 1, Count: seeds, Parallel: i + 1, KeepGoing: true})
			if err != nil {
				b.Fatal(err)
			}
			pairWall[i] = time.Since(start).Seconds()
			wall[i] += pairWall[i]
			cpu[i] += c.Seconds()
			events[i] = float64(res.Events)
		}
		if events[0] != events[1] {
			b.Fatalf("the sweeps differ: %.0f events with one worker, %.0f with two", events[0], events[1])
		}
		pairs = append(pairs, pairWall[0]/pairWall[1]/2)
	}
	n := float64(b.N * seeds)
	b.ReportMetric(n/wall[0], "seeds/s-p1")
	b.ReportMetric(n/wall[1], "seeds/s-p2")
	b.ReportMetric(wall[0]/wall[1]/2, "efficiency")
	b.ReportMetric(median(pairs), "efficiency-median-pair")
	b.ReportMetric(n/cpu[0], "seeds/cpu-s-p1")
	b.ReportMetric(n/cpu[1], "seeds/cpu-s-p2")
	b.ReportMetric(cpu[0]/wall[0], "cores-p1")
	b.ReportMetric(cpu[1]/wall[1], "cores-p2")
}

// BenchmarkSweepMemory sweeps -sweep-memory-seeds seeds of a small scenario
// (the default scenario for one simulated minute, every fault class) with
// -keep-going and reports the live heap after a GC at 10% and at 100% of
// the seeds. A sweep keeps only its first DefaultKeepFailures failing
// outcomes, so the original, which fails most seeds, must stay as flat as
// corrected, which fails few.
func BenchmarkSweepMemory(b *testing.B) {
	defer TuneGC()() // as the locksim command runs its sweeps
	for _, variant := range []string{"original", "corrected"} {
		b.Run(variant, func(b *testing.B) {
			for b.Loop() {
				m := sweepMemory(b, variant, *sweepMemorySeeds)
				b.ReportMetric(m.at10/1e6, "heap-MB-at-10%")
				b.ReportMetric(m.at100/1e6, "heap-MB-at-100%")
				b.ReportMetric(m.at100/m.at10, "growth")
				b.ReportMetric(float64(m.failures100), "failing-seeds")
			}
		})
	}
}

// TestSweepMemoryIsFlat is BenchmarkSweepMemory's assertion over 50k seeds
// (a few minutes): the heap may at most double, plus 16MB of slack. It
// sweeps the original, which fails most seeds: neither the sweep nor the
// failures it finds may make memory grow with the number of seeds.
func TestSweepMemoryIsFlat(t *testing.T) {
	if !*long {
		t.Skip("run with -long: sweeps 50k seeds")
	}
	m := sweepMemory(t, "original", 50_000) // fails most seeds: the hard case
	t.Logf("heap %.1f MB at 10%%, %.1f MB at 100%% (%d failing seeds seen, the first 100 kept)", m.at10/1e6, m.at100/1e6, m.failures100)
	if limit := 2*m.at10 + 16e6; m.at100 > limit {
		t.Errorf("heap grew from %.1f MB to %.1f MB over the sweep (limit %.1f MB)", m.at10/1e6, m.at100/1e6, limit/1e6)
	}
}

type heapSamples struct {
	at10, at100             float64 // HeapInuse after a GC, bytes
	failures10, failures100 int     // failing seeds seen by then
}

func sweepMemory(tb testing.TB, name string, seeds int) heapSamples {
	tg := defaultScenario(faults.ClassAll)
	tg.Variant = variant(name)
	tg.Config.Duration = time.Minute
	var m heapSamples
	runs, failures := 0, 0
	_, err := Sweep(tg, SweepOptions{From: 1, Count: seeds, KeepGoing: true, OnOutcome: func(o Outcome) {
		runs++
		if o.Failed() {
			failures++
		}
		switch runs {
		case max(1, seeds/10):
			m.at10, m.failures10 = heapInuse(), failures
		case seeds:
			m.at100, m.failures100 = heapInuse(), failures
		}
	}})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func heapInuse() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse)
}

func mallocCount() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// reportRate adds n per wall second and per CPU second as metrics.
func reportRate(b *testing.B, cpuSeconds float64, what string, n float64) {
	b.ReportMetric(n/b.Elapsed().Seconds(), what+"/s")
	b.ReportMetric(n/cpuSeconds, what+"/cpu-s")
}

var isolationSeeds = flag.Int("isolation-seeds", 1000, "seeds BenchmarkSweepIsolation sweeps per sweep (the CLI's default sweep)")

// BenchmarkSweepIsolation is what isolated workers cost: the default sweep
// (every fault class, each seed drawing its world) of -isolation-seeds
// seeds on every core, in this process and in worker processes, in
// alternating back-to-back pairs; the ratio of the wall times of each pair
// is the overhead, worker start-up included.
//
//	go test ./sim/explore -run XXX -bench SweepIsolation -benchtime 5x
func BenchmarkSweepIsolation(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(SweepGCPercent))
	tg := DefaultTarget(variant("corrected"))
	iso := Isolation{Command: TestWorkerCommand(b.Name())}
	sweep := func(isolate bool) (float64, int64) {
		o := SweepOptions{From: 1, Count: *isolationSeeds, KeepGoing: true}
		if isolate {
			o.Isolate = &iso
		}
		start := time.Now()
		res, err := Sweep(tg, o)
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start).Seconds(), res.Events
	}
	if IsWorker() {
		sweep(true) // serves the coordinator's seeds, and exits
		return
	}
	var wall [2]float64
	var ratios []float64
	for b.Loop() {
		var pair [2]float64
		var events [2]int64
		order := []int{0, 1}
		if len(ratios)%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			pair[i], events[i] = sweep(i == 1)
			wall[i] += pair[i]
		}
		if events[0] != events[1] {
			b.Fatalf("the sweeps differ: %d events in process, %d isolated", events[0], events[1])
		}
		ratios = append(ratios, pair[1]/pair[0])
	}
	n := float64(b.N * *isolationSeeds)
	b.ReportMetric(n/wall[0], "seeds/s-in-process")
	b.ReportMetric(n/wall[1], "seeds/s-isolated")
	b.ReportMetric(median(ratios), "isolated/in-process-median-pair")
}

// BenchmarkExhaust is systematic exploration's throughput: each iteration
// exhausts the small world (3 nodes, 2 clients, 1 grant each) up to k
// faults, on one worker, and reports schedules per CPU-second and the
// schedules per level. original stops at its first counterexample level
// (k=1); corrected and fenced have none, so they run every level.
func BenchmarkExhaust(b *testing.B) {
	for _, tc := range []struct {
		name string
		k    int
	}{{"original", 2}, {"corrected", 2}, {"fenced", 1}} {
		b.Run(fmt.Sprintf("%s/k=%d", tc.name, tc.k), func(b *testing.B) {
			tg := Target{Variant: variant(tc.name), Config: SmallWorld(3, 2, 1)}
			var res ExhaustResult
			schedules := 0
			cpu := cputime.Start()
			for b.Loop() {
				var err error
				if res, err = Exhaust(tg, ExhaustOptions{MaxFaults: tc.k, Parallel: 1}); err != nil {
					b.Fatal(err)
				}
				schedules += res.Schedules()
			}
			reportRate(b, cpu.Seconds(), "schedules", float64(schedules))
			for _, l := range res.Levels {
				b.ReportMetric(float64(l.Schedules), fmt.Sprintf("schedules-k%d", l.Faults))
			}
		})
	}
}

// BenchmarkExhaustEveryVariant exhausts k=2 for every registered variant
// in the small world, every level run (KeepGoing), on every core: what
// compare -exhaust 2 adds to VARIANTS.md. It reports the wall seconds of
// one pass and the schedules run.
func BenchmarkExhaustEveryVariant(b *testing.B) {
	schedules := 0
	for b.Loop() {
		schedules = 0
		for _, v := range variants.All() {
			res, err := Exhaust(Target{Variant: v, Config: SmallWorld(3, 2, 1)}, ExhaustOptions{MaxFaults: 2, KeepGoing: true})
			if err != nil {
				b.Fatal(err)
			}
			schedules += res.Schedules()
		}
	}
	b.ReportMetric(float64(schedules), "schedules")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pass")
}

// BenchmarkPCTAgainstSwarm compares, for every entry of BUGS.md, the seeds
// the default sweep takes to show it with the seeds' own latency draws
// (swarm) and with PCT of depth 3 scheduling the deliveries: the median
// over pctSweeps independent sweeps from different first seeds, each
// stopped at pctStride seeds (missed counts those).
func BenchmarkPCTAgainstSwarm(b *testing.B) {
	defer TuneGC()()
	for _, e := range catalogue {
		for _, sched := range []struct {
			name string
			pct  *PCT
		}{{"swarm", nil}, {"pct-d3", &PCT{Depth: 3, Steps: DefaultPCTSteps}}} {
			b.Run(e.name+"/"+sched.name, func(b *testing.B) {
				tg := e.target()
				tg.PCT = sched.pct
				var seeds []float64
				missed := 0
				for b.Loop() {
					seeds = seeds[:0]
					for i := range pctSweeps {
						from := 1 + uint64(i)*pctStride
						o, found := firstIn(b, e, tg, from, pctStride)
						n := float64(pctStride)
						if found {
							n = float64(o.Seed - from + 1)
						} else {
							missed++
						}
						seeds = append(seeds, n)
					}
				}
				b.ReportMetric(median(seeds), "median-seeds")
				b.ReportMetric(float64(missed), "missed")
			})
		}
	}
}

const (
	pctSweeps = 5
	pctStride = 5_000
)
