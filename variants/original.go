package variants

import "locksim/algorithm"

// The blog post's lock, transliterated in package algorithm with its bugs.
// Its assumptions are the post's own: one shared clock, one thread per host,
// and nodes that never lose what they stored.
func init() {
	Register(algorithm.Variant{
		Name:        "original",
		Summary:     "the blog post's algorithm, bugs included",
		New:         func() algorithm.Lock { return algorithm.Original{} },
		Assumptions: "the post's own: hosts share one clock, one thread per host, nodes never lose data, clients never pause",
	})
}
