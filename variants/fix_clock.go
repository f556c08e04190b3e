package variants

import "github.com/locksim/locksim/algorithm"

// fix-clock lets the node that stores a lock item decide when it expires.
//
// Bug: lockExpiry is an instant on the writer's clock, and HasExpired
// compares it with the reader's clock: a reader whose clock runs ahead (or a
// writer whose clock lags) scavenges a live lock. The post assumes "a system
// that share a clock"; real hosts do not.
// Fix: items are written with SetIfAbsentTTL, a time-to-live the node counts
// on its own clock, and the node forgets them when it runs out; scavenging
// only checks whether a node still returns an item, and releasing is a
// CompareAndDelete by owner. No two clocks are ever compared. An item already
// held by the same owner still counts as written (the original's
// "OrSameServer"), but its TTL is not pushed back.
func init() {
	registerDHT(algorithm.Variant{
		Name:    "fix-clock",
		Summary: "node-side TTL (SetIfAbsentTTL) instead of comparing the writer's clock with the reader's",
		// Nothing: no clock is compared with another, so the post's shared
		// clock is no longer needed, and the holder, which has no validity,
		// never reads a clock at all. Its other bugs are inside.
		Envelope: algorithm.Envelope{},
	}, Place{OneFix, 2}, fixes{nodeClock: true})
}
