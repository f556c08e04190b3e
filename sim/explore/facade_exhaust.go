package explore

import (
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/exhaust"
)

// ExhaustOptions is exhaust.ExhaustOptions.
type ExhaustOptions = exhaust.ExhaustOptions

// Level is exhaust.Level.
type Level = exhaust.Level

// ExhaustResult is exhaust.ExhaustResult.
type ExhaustResult = exhaust.ExhaustResult

// HangError is exhaust.HangError.
type HangError = exhaust.HangError

// Constants of exhaust.
const (
	DefaultMaxSchedules = exhaust.DefaultMaxSchedules
)

// Exhaust is exhaust.Exhaust.
func Exhaust(t Target, o ExhaustOptions) (ExhaustResult, error) { return exhaust.Exhaust(t, o) }

// SmallWorld is exhaust.SmallWorld.
func SmallWorld(nodes, clients, acquisitions int) sim.Config {
	return exhaust.SmallWorld(nodes, clients, acquisitions)
}
