package explore

import (
	"io"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/sweep"
)

// SweepOptions is sweep.SweepOptions.
type SweepOptions = sweep.SweepOptions

// StopPolicy is sweep.StopPolicy.
type StopPolicy = sweep.StopPolicy

// SweepResult is sweep.SweepResult.
type SweepResult = sweep.SweepResult

// SweepReport is sweep.SweepReport.
type SweepReport = sweep.SweepReport

// BreachCount is sweep.BreachCount.
type BreachCount = sweep.BreachCount

// TargetReport is sweep.TargetReport.
type TargetReport = sweep.TargetReport

// SeedsReport is sweep.SeedsReport.
type SeedsReport = sweep.SeedsReport

// FailureReport is sweep.FailureReport.
type FailureReport = sweep.FailureReport

// Shard is sweep.Shard.
type Shard = sweep.Shard

// MergedSweep is sweep.MergedSweep.
type MergedSweep = sweep.MergedSweep

// Constants of sweep.
const (
	StopOnSafety        = sweep.StopOnSafety
	StopOnAny           = sweep.StopOnAny
	DefaultKeepFailures = sweep.DefaultKeepFailures
	DefaultSweepSeeds   = sweep.DefaultSweepSeeds
	Forever             = sweep.Forever
)

// CheckSeeds is sweep.CheckSeeds.
func CheckSeeds(from uint64, count int) error { return sweep.CheckSeeds(from, count) }

// ParseStopPolicy is sweep.ParseStopPolicy.
func ParseStopPolicy(s string) (StopPolicy, error) { return sweep.ParseStopPolicy(s) }

// Sweep is sweep.Sweep.
func Sweep(t Target, o SweepOptions) (SweepResult, error) { return sweep.Sweep(t, o) }

// JournalPath is sweep.JournalPath.
func JournalPath(dir string, t Target, o SweepOptions) string { return sweep.JournalPath(dir, t, o) }

// NewSweepReport is sweep.NewSweepReport.
func NewSweepReport(t Target, strict bool, o SweepOptions) SweepReport {
	return sweep.NewSweepReport(t, strict, o)
}

// NewFailureReport is sweep.NewFailureReport.
func NewFailureReport(o Outcome, t Target, replay string, repro string) FailureReport {
	return sweep.NewFailureReport(o, t, replay, repro)
}

// ExpectedCounts is sweep.ExpectedCounts.
func ExpectedCounts(by map[algorithm.Assumption]int) []BreachCount { return sweep.ExpectedCounts(by) }

// DescribeDraws is sweep.DescribeDraws.
func DescribeDraws(beyond []algorithm.Assumption) string { return sweep.DescribeDraws(beyond) }

// DecodeShards is sweep.DecodeShards.
func DecodeShards(name string, r io.Reader) ([]Shard, error) { return sweep.DecodeShards(name, r) }

// MergeShards is sweep.MergeShards.
func MergeShards(shards []Shard, partial bool) (MergedSweep, error) {
	return sweep.MergeShards(shards, partial)
}

// SweepGCPercent is sweep.SweepGCPercent.
const SweepGCPercent = sweep.SweepGCPercent

// TuneGC is sweep.TuneGC.
func TuneGC() (restore func()) { return sweep.TuneGC() }
