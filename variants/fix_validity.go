package variants

import "github.com/locksim/locksim/algorithm"

// fix-validity tells the holder when to stop.
//
// Bug: the items expire after a minute and are then scavenged by others, but
// the holder believes it holds the lock until it releases: a holder slower
// than the TTL (a long acquire, a pause, a slow critical section) overlaps
// the next holder.
// Fix: the grant carries ValidUntil = start + TTL - drift margin (1% of the
// TTL + 2 ms), start read on the holder's own clock before its first write;
// if that is already past when the quorum is reached, it releases and
// refuses. The workload stops using the lock once ValidUntil has passed.
func init() {
	registerDHT(algorithm.Variant{
		Name:    "fix-validity",
		Summary: "the grant is valid until start + TTL - drift margin, on the holder's clock",
		// The post's shared clock (its error is well inside the margin), and
		// a holder that uses the lock only while it is valid.
		Envelope: algorithm.Envelope{Safety: withUseWithinValidity(postAssumptions())},
	}, Place{OneFix, 3}, fixes{validity: true})
}
