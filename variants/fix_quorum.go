package variants

import "github.com/locksim/locksim/algorithm"

// fix-quorum repairs the quorum expression.
//
// Bug: `(successfulLocks/2) >= (topology.Count/2)` with integer division
// grants with zero locks when the key lives on one node (0/2 >= 1/2), and
// from four nodes up it demands more than a majority (3 of 4 or 3 of 5 are
// refused); at two and three nodes it is a majority by accident.
// Fix: a strict majority, successfulLocks > len(topology)/2, so two clients
// can never both hold a quorum of the same topology.
func init() {
	registerDHT(algorithm.Variant{
		Name:     "fix-quorum",
		Summary:  "strict majority: successfulLocks > len(topology)/2",
		Envelope: algorithm.Envelope{Safety: postAssumptions()},
	}, Place{OneFix, 4}, fixes{strictQuorum: true})
}
