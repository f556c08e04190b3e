package faults

import "time"

// The most a world and a plan may ask for. A run is a pure function of its
// world, seed and plan, so a world or plan past these is refused, before
// anything runs, rather than left to end as a hang or an out-of-memory
// that would be blamed on the lock. sim.Config.Validate checks the world's
// (with sim.MaxNodes and sim.MaxHosts), Plan.Validate and Decode the
// plan's; sim/seedrun's limits.go lists them all with the CLI's and the
// files'.
const (
	// MaxDuration is the most virtual time one run may last: six times the
	// default world's ten minutes, twice the longest run the tests and docs
	// use. At the hottest contention there is (think and hold times under a
	// millisecond) an hour is about 4 million events, under two seconds and
	// 500 MB, so eight seeds fit an isolated worker's 20 s and 2 GiB.
	MaxDuration = time.Hour
	// MaxClients is the most client threads a world may have in all
	// (hosts × threads per host, a plan's threads_per_host included): each
	// is a coroutine, and a run's events grow with them.
	MaxClients = 64
	// MaxClientTime bounds clients × duration, the workload a run
	// simulates: 16 client-hours (64 clients for 15 minutes, 16 for an
	// hour). A run makes about six events per client per virtual second in
	// the default world, so this is a few hundred thousand events; a world
	// a seed draws has at most 12 clients, within it for any duration.
	MaxClientTime = 16 * time.Hour
	// MaxSpan bounds every other duration of a world or a plan (a TTL, a
	// latency, a fault's length, a clock's offset, the sum of its jumps):
	// about six weeks, longer than any run, and small enough that the sums
	// of times the simulator makes never overflow.
	MaxSpan = 1000 * time.Hour
	// MaxEvents is the most timed events one plan may hold. Generated
	// plans hold a few dozen; processing a plan is n log n in its events,
	// and a plan of this many runs in about a second (partitions or timed
	// topology changes that are all in force at once still cost the square
	// of their number in list shifts: about ten seconds at this many).
	MaxEvents = 100_000
	// MaxPlanBytes is the largest plan file Decode reads: a plan of
	// MaxEvents events, indented, is about 25 MiB.
	MaxPlanBytes = 32 << 20
	// MaxCap bounds a world's caps on a run's work (max_events,
	// max_steps_no_yield, max_calls_no_sleep): a hundred million is about
	// half a minute of events, twenty times the default floor.
	MaxCap = 100_000_000
)

// MaxDrawnThreadsPerHost is the most threads per host a generated plan of
// class threads sets (it draws 2..3): what a sweep must allow for, before
// its first seed, on the hosts it may draw.
const MaxDrawnThreadsPerHost = 3
