package sim

import "math/rand/v2"

// Random streams: one per component, each split from the scenario seed, so
// that drawing more from one (adding a fault) never reshuffles another (the
// workload).
const (
	streamNetwork  = 1
	streamPoints   = 2
	streamWorkload = 1 << 20 // + client index
	streamAlgo     = 2 << 20 // + client index
)

// splitmix64 is the standard seed scrambler: nearby seeds give unrelated streams.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func newStream(seed, id uint64) *rand.Rand {
	s := splitmix64(seed ^ splitmix64(id))
	return rand.New(rand.NewPCG(s, splitmix64(s)))
}

// between draws uniformly from [lo, hi] (integers only: no float in a decision).
func between(r *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + r.Int64N(hi-lo+1)
}

// chance is true with probability ppm parts per million.
func chance(r *rand.Rand, ppm uint32) bool {
	return ppm > 0 && r.Uint32N(1_000_000) < ppm
}
