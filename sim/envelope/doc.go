// Package envelope holds the edges of a variant's envelope in one place:
// how far a seed may push its world and its fault plan, and how a finished
// run is judged against the same edges.
//
// A variant's envelope (algorithm.Envelope) says what it assumes of the
// world. Edges turns those assumptions into what a seed draws: its world
// (WorldAt, over the fields in world.go, such as nodes, replication and
// latency) and the fault bounds its plan is drawn within (Bounds,
// SafetyBounds, BoundsAt, in bounds.go), up to each edge and past those
// the target breaks on purpose (Beyond). Breaches (breach.go) reads what a
// run actually did and lists the assumptions it broke. ChangeWorld
// (changes.go) removes one thing from a seed's world or plan, so that a
// replay can tell whether that thing was needed.
//
// Drawing up to an edge and judging a breach of it live side by side, so
// that a new assumption is one change in one package: its bound, its draw
// and its breach.
//
// The package imports algorithm, faults, model, sim and rapid (for
// WorldGen). It never imports seedrun or anything above it: seedrun's
// Target builds Edges (Target.Edges).
package envelope
