package variants

import "github.com/locksim/locksim/algorithm"

// fix-identity gives every acquisition its own owner identity.
//
// Bug: the lock items hold currentServerName, which every thread on a host
// shares, and the write succeeds "OrSameServer": two threads of one host both
// get the lock, and either one's ClearLock removes the other's items.
// Fix: the owner is host name + client name + a random nonce drawn per
// acquisition, so the same-owner overwrite and ClearLock only ever match the
// items of this acquisition.
func init() {
	registerDHT(algorithm.Variant{
		Name:     "fix-identity",
		Summary:  "owner = host + client + random nonce per acquisition, not the host name",
		Envelope: algorithm.Envelope{Safety: postAssumptions()},
	}, Place{OneFix, 1}, fixes{uniqueOwner: true})
}
