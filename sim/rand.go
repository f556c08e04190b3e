package sim

import (
	"math/bits"
	"math/rand/v2"
)

// Random streams: one per component, each split from the scenario seed, so
// that drawing more from one (adding a fault) never reshuffles another (the
// workload).
const (
	streamNetwork  = 1
	streamPoints   = 2
	streamTopology = 3
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

// stream is a random stream only the kernel draws from (network, fault
// points, workload). It holds its PCG by value and draws from it directly,
// with math/rand/v2's own bounded-draw algorithm copied below, so a draw
// inlines instead of going through rand.Rand and the rand.Source interface,
// and yields exactly the values rand.New(pcg) would (rand_test.go checks).
type stream struct{ pcg rand.PCG }

func newStream(seed, id uint64) stream {
	s := splitmix64(seed ^ splitmix64(id))
	var st stream
	st.pcg.Seed(s, splitmix64(s))
	return st
}

// newAlgoStream is the stream an algorithm gets from Env.Rand: a
// *rand.Rand, seeded as newStream seeds a kernel stream.
func newAlgoStream(seed, id uint64) *rand.Rand {
	st := newStream(seed, id)
	return rand.New(&st.pcg)
}

// uint64n is (*rand.Rand).Uint64N on a 64-bit machine: a draw in [0, n),
// n > 0, by Lemire's multiply-and-reject, drawing exactly what it draws.
// The rare rejection loop (about one draw in 2^44 for the kernel's ranges)
// is out of line, so the common draw is smaller.
func (s *stream) uint64n(n uint64) uint64 {
	x := s.pcg.Uint64()
	if n&(n-1) == 0 { // n is a power of two: mask
		return x & (n - 1)
	}
	hi, lo := bits.Mul64(x, n)
	if lo < n {
		hi = s.reject(n, hi, lo)
	}
	return hi
}

// reject finishes uint64n's multiply-and-reject for a first draw whose
// low half fell under n.
func (s *stream) reject(n, hi, lo uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(s.pcg.Uint64(), n)
	}
	return hi
}

// between draws uniformly from [lo, hi] (integers only: no float in a decision).
func between(r *stream, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	n := hi - lo + 1
	if n <= 0 {
		panic("invalid argument to Int64N") // as rand.Rand would: the range overflows
	}
	return lo + int64(r.uint64n(uint64(n)))
}

// spanOf is the size of between(lo, hi)'s range, hi-lo+1: 0 when it
// draws nothing (hi <= lo), false when the size overflows (between
// panics). between keeps its own copy of the rule inline: calling this
// from it cost 0.1 M instructions a run.
func spanOf(lo, hi int64) (uint64, bool) {
	if hi <= lo {
		return 0, true
	}
	n := hi - lo + 1
	return uint64(n), n > 0
}

// chance is true with probability ppm parts per million.
func chance(r *stream, ppm uint32) bool {
	return ppm > 0 && r.uint64n(1_000_000) < uint64(ppm)
}
