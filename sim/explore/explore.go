// Package explore is what locksim's users drive, in one package: it runs a
// scenario and checks it, hunts across seeds on every core, explores
// schedules, shrinks a failing plan, reads and writes repro files, and
// fills the comparison matrix. The CLI and the tests are thin layers over
// it, so a failure found by either is replayed and minimised the same way.
//
// It is a facade: every name in it is a type alias, a constant, a variable
// or a one-line function of the package that holds the concern, so that
// its callers need not know how the work is split, and new code may import
// the package it needs:
//
//	sim/schedule   a run's choice points decided other than by its seed:
//	               Schedule, Menu, PCT
//	sim/seedrun    running one seed and judging it: Target, Options, Outcome,
//	               RunSeed, RunPlan, Finding, Classify, ReplayCommand, the
//	               input limits, Version
//	sim/isolate    running seeds in worker processes: Isolation, Run,
//	               RunIsolated, FindingError, TestWorkerCommand, IsWorker
//	sim/sweep      many seeds on every core, journals and shards: Sweep,
//	               SweepOptions, SweepResult, SweepReport, MergeShards,
//	               TuneGC
//	sim/exhaust    every schedule with at most k faults: Exhaust,
//	               ExhaustOptions, ExhaustResult, HangError, SmallWorld
//	sim/minimize   shrinking a failing run: Minimize, MinimizeWith
//	sim/repro      repro files and a run's pages: Repro, ReadRepro,
//	               WriteRepro, Replay, WritePages
//	sim/compare    the variant × class matrix: Compare, CompareOptions
//	sim/envelope   the world a seed draws and the breaches of a run, whose
//	               names envelope.go keeps here for older callers
//
// The imports point one way: schedule ← seedrun ← isolate ← sweep,
// exhaust, minimize ← compare ← explore; repro needs only seedrun and
// schedule. The facade files are named after the package they re-export
// (facade_sweep.go: sim/sweep).
//
// One name is not re-exported: the prefix of every printed command is a
// variable that the locksim command sets, and no alias can share a
// variable: set seedrun.CommandPrefix.
//
// The engine takes variants as values and knows none by name: a repro file
// names its variant, and the caller says where to find it (Lookup; the CLI
// passes variants.Lookup).
package explore
