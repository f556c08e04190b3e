package explore

import (
	"flag"
	"io"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/seedrun"
)

// Target is seedrun.Target.
type Target = seedrun.Target

// Runner is seedrun.Runner.
type Runner = seedrun.Runner

// Outcome is seedrun.Outcome.
type Outcome = seedrun.Outcome

// Options is seedrun.Options.
type Options = seedrun.Options

// Finding is seedrun.Finding.
type Finding = seedrun.Finding

// TooLargeError is seedrun.TooLargeError.
type TooLargeError = seedrun.TooLargeError

// Constants of seedrun.
const (
	Version              = seedrun.Version
	DefaultCommandPrefix = seedrun.DefaultCommandPrefix
	MaxReproBytes        = seedrun.MaxReproBytes
	MaxConfigBytes       = seedrun.MaxConfigBytes
	MaxShardBytes        = seedrun.MaxShardBytes
	MaxParallel          = seedrun.MaxParallel
	MaxLivenessBoundTTLs = seedrun.MaxLivenessBoundTTLs
)

// DefaultTarget is seedrun.DefaultTarget.
func DefaultTarget(v algorithm.Variant, classes ...faults.Class) Target {
	return seedrun.DefaultTarget(v, classes...)
}

// DefaultOptions is seedrun.DefaultOptions.
func DefaultOptions() Options { return seedrun.DefaultOptions() }

// RunPlan is seedrun.RunPlan.
func RunPlan(t Target, seed uint64, plan faults.Plan, opt Options) (Outcome, error) {
	return seedrun.RunPlan(t, seed, plan, opt)
}

// RunSeed is seedrun.RunSeed.
func RunSeed(t Target, seed uint64, opt Options) (Outcome, error) {
	return seedrun.RunSeed(t, seed, opt)
}

// Classify is seedrun.Classify.
func Classify(env algorithm.Envelope, v model.Verdict, breaches []envelope.Breach, livenessBound time.Duration) []Finding {
	return seedrun.Classify(env, v, breaches, livenessBound)
}

// RegisterConfigFlags is seedrun.RegisterConfigFlags.
func RegisterConfigFlags(fs *flag.FlagSet, c *sim.Config) { seedrun.RegisterConfigFlags(fs, c) }

// ConfigArgs is seedrun.ConfigArgs.
func ConfigArgs(c sim.Config) []string { return seedrun.ConfigArgs(c) }

// MenuFor is seedrun.MenuFor.
func MenuFor(t Target) Menu { return seedrun.MenuFor(t) }

// ReplayCommand is seedrun.ReplayCommand.
func ReplayCommand(t Target, seed uint64) string { return seedrun.ReplayCommand(t, seed) }

// ReplayFileCommand is seedrun.ReplayFileCommand.
func ReplayFileCommand(path string) string { return seedrun.ReplayFileCommand(path) }

// ReadFile is seedrun.ReadFile.
func ReadFile(path string, what string, max int) ([]byte, error) {
	return seedrun.ReadFile(path, what, max)
}

// LimitReader is seedrun.LimitReader.
func LimitReader(r io.Reader, name string, what string, max int) io.Reader {
	return seedrun.LimitReader(r, name, what, max)
}

// CheckLivenessBound is seedrun.CheckLivenessBound.
func CheckLivenessBound(ttls int64, ns int64) error { return seedrun.CheckLivenessBound(ttls, ns) }

// WriteFileAtomic is seedrun.WriteFileAtomic.
func WriteFileAtomic(path string, data []byte) error { return seedrun.WriteFileAtomic(path, data) }
