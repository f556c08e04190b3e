package variants

import "github.com/locksim/locksim/algorithm"

// fix-partial gives back what a failed acquire wrote.
//
// Bug: on KeyAlreadyExists, or when the quorum is not reached, LockKey
// returns false and leaves the items it already wrote. They block every other
// client for a whole TTL, and two clients that each hold a part block each
// other.
// Fix: before returning false, run ClearLock for its own items. ClearLock
// reads every server, so it also removes items whose write was applied but
// whose reply was lost. With the host-name identity kept, it also removes
// items of another thread on the same host (that is fix-identity's bug).
func init() {
	registerDHT(algorithm.Variant{
		Name:     "fix-partial",
		Summary:  "a failed acquire clears the items it wrote (lost replies included)",
		Envelope: algorithm.Envelope{Safety: postAssumptions()},
	}, Place{OneFix, 7}, fixes{releasePartial: true})
}
