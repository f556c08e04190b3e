package variants

import "github.com/locksim/locksim/algorithm"

// fix-amnesia is the original, deployed with restart quarantine.
//
// Bug: a node that restarts empty (volatile storage) has forgotten the lock
// items it held; the next client wins its write, and with it a quorum that
// overlaps the holder's.
// Fix: no change to the algorithm; the variant requires every restarted node
// to refuse writes for one TTL, by which time every item it could have held
// has expired anyway (Assumptions.RestartQuarantine).
func init() {
	Register(inFamily(algorithm.Variant{
		Name:    "fix-amnesia",
		Summary: "the original, with restarted nodes refusing writes for one TTL",
		New:     func() algorithm.Lock { return algorithm.Original{} },
		// The post's assumptions, and a deployment that quarantines restarts.
		Envelope: algorithm.Envelope{Safety: withQuarantine(postAssumptions())},
	}, fixes{}), Place{OneFix, 6})
}
