package explore

import (
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/isolate"
)

// Isolation is isolate.Isolation.
type Isolation = isolate.Isolation

// FindingError is isolate.FindingError.
type FindingError = isolate.FindingError

// Constants of isolate.
const (
	DefaultHangAfter    = isolate.DefaultHangAfter
	DefaultMemoryLimit  = isolate.DefaultMemoryLimit
	DefaultStartTimeout = isolate.DefaultStartTimeout
)

// ErrNoWorkers is isolate.ErrNoWorkers.
var ErrNoWorkers = isolate.ErrNoWorkers

// IsWorker is isolate.IsWorker.
func IsWorker() bool { return isolate.IsWorker() }

// TestWorkerCommand is isolate.TestWorkerCommand.
func TestWorkerCommand(name string) []string { return isolate.TestWorkerCommand(name) }

// TestRunPattern is isolate.TestRunPattern.
func TestRunPattern(name string) string { return isolate.TestRunPattern(name) }

// Run is isolate.Run.
func Run(t Target, seed uint64, plan *faults.Plan, opt Options, iso *Isolation) (Outcome, error) {
	return isolate.Run(t, seed, plan, opt, iso)
}

// RunIsolated is isolate.RunIsolated.
func RunIsolated(t Target, seed uint64, plan *faults.Plan, opt Options, iso Isolation) (Outcome, error) {
	return isolate.RunIsolated(t, seed, plan, opt, iso)
}
