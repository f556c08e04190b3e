package seedrun

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/schedule"
)

// Edges are the edges of t's envelope, as its seeds draw up to them: its
// variant's envelope, world, classes and what it breaks (sim/envelope).
func (t Target) Edges() envelope.Edges {
	return envelope.Edges{Variant: t.Variant.Name, Envelope: t.Variant.Envelope, Config: t.Config,
		Classes: t.Classes, Beyond: t.Beyond, World: t.World}
}

// At is the target as seed runs it: its world drawn (the fields in World,
// envelope.Edges.WorldAt), the others as Config sets them. World is empty
// in the result.
func (t Target) At(seed uint64) Target {
	if len(t.World) > 0 {
		t.Config = t.Edges().WorldAt(seed)
		t.World = nil
	}
	return t
}

// Bounds is what the target's liveness seeds draw within: its variant's
// envelope, safety's and liveness's assumptions together, reaching their
// edges, and crossing those named in Beyond on purpose
// (envelope.Edges.Bounds).
func (t Target) Bounds() faults.Bounds { return t.Edges().Bounds() }

// SafetyBounds is what the target's safety seeds draw within: the safety
// assumptions only (envelope.Edges.SafetyBounds).
func (t Target) SafetyBounds() faults.Bounds { return t.Edges().SafetyBounds() }

// BoundsAt is what seed draws within: odd seeds search liveness as well
// as safety (Bounds), even seeds safety alone (SafetyBounds), unless the
// target breaks assumptions on purpose (envelope.Edges.BoundsAt).
func (t Target) BoundsAt(seed uint64) faults.Bounds { return t.Edges().BoundsAt(seed) }

// MenuFor is the menu of deviations inside t's envelope
// (schedule.MenuFor): every deviation its variant's safety assumptions
// allow, and those its Beyond breaks on purpose.
func MenuFor(t Target) schedule.Menu { return schedule.MenuFor(t.Config, t.SafetyBounds()) }

// BeyondAll is every assumption t's variant makes that t's classes can
// break: what "-beyond all" asks for (envelope.Edges.BeyondAll).
func (t Target) BeyondAll() []algorithm.Assumption { return t.Edges().BeyondAll() }
