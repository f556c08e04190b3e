package variants

import (
	"time"

	"github.com/locksim/locksim/algorithm"
)

// The blog post's lock, transliterated in package algorithm with its bugs.
//
// Its envelope is what the post itself assumes, and no more: "We assume a
// system that share a clock (or synchronize clocks)", that is, a bounded
// clock error. Everything else the post describes is the world it runs in,
// not an assumption: a DHT "where nodes are allowed to fail", a key on
// "usually 1 or 3" nodes, and any number of threads on a host (the post
// names the lock's owner currentServerName, but nothing in it says one
// thread per server). It promises what a lock promises: mutual exclusion,
// a safe resource, and liveness once faults heal ("we need to recover from
// situations in which some of the nodes holding the key are down").
func init() {
	Register(inFamily(algorithm.Variant{
		Name:     "original",
		Summary:  "the blog post's algorithm, bugs included",
		New:      func() algorithm.Lock { return algorithm.Original{} },
		Envelope: algorithm.Envelope{Safety: postAssumptions()},
	}, fixes{}), Place{Family: Original})
	// The pseudo-code's undefined names read literally where a name in
	// scope fits: ClearLock reads `lockKey`, undefined there, and the only
	// key in scope is `key` itself (algorithm.Original.Literal).
	Register(inFamily(algorithm.Variant{
		Name:     "original-literal",
		Summary:  "the blog post's algorithm with its undefined names read literally: ClearLock reads and removes the key itself",
		New:      func() algorithm.Lock { return algorithm.Original{Literal: true} },
		Envelope: algorithm.Envelope{Safety: postAssumptions()},
	}, fixes{literalClear: true}), Place{Family: Original})
}

// SyncedClockError is how far apart the post's "synchronized" clocks may
// read: NTP keeps hosts within tens of milliseconds of each other, so 100 ms
// is a generous reading of "a system that share a clock".
const SyncedClockError = 100 * time.Millisecond

// postAssumptions are the post's own assumptions, which every variant
// that keeps the original's clock comparison inherits.
func postAssumptions() algorithm.Assumptions {
	return algorithm.Assumptions{ClockErrorMax: SyncedClockError}
}

// withQuarantine is a plus a deployment that quarantines restarted nodes.
func withQuarantine(a algorithm.Assumptions) algorithm.Assumptions {
	a.RestartQuarantine = true
	return a
}

// withUseWithinValidity is a plus a holder that never uses the lock after
// its validity: no pause or delay between its check and its use outlasts
// what is left.
func withUseWithinValidity(a algorithm.Assumptions) algorithm.Assumptions {
	a.UseWithinValidity = true
	return a
}
