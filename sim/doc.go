// Package sim is locksim's kernel: a deterministic discrete-event simulation
// of a DHT's nodes, its clients and the network between them, on a virtual
// clock. Run takes a Scenario (a Config world, an algorithm.Variant, a seed
// and a faults.Plan) and returns the run's model.History and a trace hash:
// the same scenario gives the same hash on any machine.
//
// One file per simulated piece, each with a why-comment on top:
//
//	scenario.go   what a run takes and returns (Scenario, Result)
//	config.go     the world: nodes, clients, latencies, TTL, caps
//	world.go      the run: Run, the event loop, caps, the end of a run
//	queue.go      the event queue, in (time, seq) order
//	network.go    messages: send, loss, duplication, partitions, delivery
//	node.go       a node's store and its atomic primitives
//	process.go    a client: its coroutine and the Env the algorithm calls
//	workload.go   what each client does: acquire, the critical section, release
//	clock.go      clocks: offset, drift and jumps, on a node's or a host's own time
//	faultplan.go  a plan's faults starting and ending
//	topology.go   where a key lives, and changes of the ring
//	reach.go      when a majority was reachable (computed after a run)
//	choice.go     every random decision as a named choice point (Chooser)
//	rand.go       the seed's random streams
//	trace.go      the trace hash
//	buffers.go    what one run lends the next (Buffers), so a sweep allocates little
//	describe.go   words for traces and findings
//	determinism.go  running a scenario twice to prove it hashes the same
//
// Three clocks, kept apart by type and name: true time (int64 nanoseconds,
// what the queue orders and what History records), a node's or a host's own
// clock (reading, which only clock.local and clock.trueAt convert), and a
// host's local time of day (Env.LocalNow: its clock plus a zone).
//
// Why one package of about 4,000 lines: these files are one event loop.
// Its hot path (pop an event, deliver a message, apply it, send the reply,
// wake a client) crosses queue.go, network.go, node.go, process.go and
// clock.go on every event, and relies on the compiler inlining small helpers
// across them (docs/PERFORMANCE.md counts each). Packages would turn those
// helpers into exported calls and the world's fields into an API nobody
// outside needs. What is not on that path lives below (faults, model,
// algorithm) or above: sim/envelope (a variant's edges), sim/realredis (the
// other way to run a seed, for unmodified libraries), and the packages that
// drive runs (see docs/ARCHITECTURE.md).
package sim
