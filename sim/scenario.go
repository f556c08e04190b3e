package sim

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// Scenario is everything a run is a pure function of.
type Scenario struct {
	Config  Config
	Variant algorithm.Variant
	Seed    uint64
	Plan    faults.Plan
	// Trace records every event as text (for timelines and the determinism
	// check). Off, the run still hashes every event.
	Trace bool
	// Items records every lock item's stay on a node (History.Items), for
	// explaining a wait (model.ExplainWait). Off, only the long stays are
	// (History.LongItems). Either way the trace hash is the same.
	Items bool
	// Buffers, when set, lends the run memory from earlier runs (see Buffers).
	Buffers *Buffers
	// Choices, when set, makes the Chooser that decides every choice point
	// of the run (choice.go), given the seed's random streams as a Chooser
	// to defer to. nil: the seed's streams decide them all, as in every
	// sweep and recorded repro.
	Choices func(seed Chooser) Chooser
}

// Result is what Run returns.
type Result struct {
	History   model.History
	TraceHash uint64
	Events    int64              // simulator events processed
	Trace     []model.TraceEvent // only when Scenario.Trace
	// Injected are the faults the Chooser injected (an Injector), at the
	// instants they started, in order: with Plan's events, what ran.
	Injected []faults.Event
}

// LockKey is the key every client locks (the pseudo-code's `key`).
const LockKey = "k"
