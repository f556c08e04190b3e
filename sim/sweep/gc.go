package sweep

import (
	"os"
	"runtime/debug"
)

// SweepGCPercent is the GOGC the locksim command runs at.
//
// A sweep keeps a few MB live (per worker: one run's buffers and history)
// while every seed allocates a few hundred KB that die with it. At Go's
// default GOGC=100 the heap target is then its 4 MB floor and the collector
// starts a cycle every ~10 seeds; each cycle's fixed cost and its
// background mark workers take ~10% of a core, which a single worker gets
// from the idle core but two workers must take from each other (parallel
// efficiency ~0.82 at 2 cores instead of ~0.96; docs/PERFORMANCE.md).
// At 400 the heap peaks around 5x the live heap, still a few tens of MB,
// and stays flat over a long sweep.
const SweepGCPercent = 400

// TuneGC sets GOGC to SweepGCPercent unless the user set the GOGC
// environment variable, and returns a function that restores the previous
// setting. The locksim command calls it once at start; benchmarks that
// measure what the command does call it too.
func TuneGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(SweepGCPercent)
	return func() { debug.SetGCPercent(old) }
}
