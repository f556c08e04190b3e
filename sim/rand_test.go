package sim

import (
	"math"
	"testing"
)

// The kernel's streams reimplement rand.Rand's bounded draws on a bare PCG;
// they must return the very values, in the very order, that rand.Rand on
// the same PCG would, or every recorded trace hash would change.
func TestStreamDrawsMatchRandRand(t *testing.T) {
	bounds := []int64{1, 2, 3, 7, 8, 10, 1000, 1 << 20, 1_000_000, 4_000_001, 49_999_999,
		1<<32 - 1, 1 << 32, 1<<32 + 1, 3 << 40, 1 << 62, 1<<62 + 12345, math.MaxInt64 / 3 * 2,
		math.MaxInt64 - 1, math.MaxInt64}
	for seed := uint64(0); seed < 200; seed++ {
		for _, id := range []uint64{streamNetwork, streamPoints, streamWorkload + 3} {
			got := newStream(seed, id)
			want := newAlgoStream(seed, id) // rand.Rand over the same PCG
			for i := 0; i < 50; i++ {
				n := bounds[(int(seed)+i)%len(bounds)]
				if g, w := got.uint64n(uint64(n)), want.Uint64N(uint64(n)); g != w {
					t.Fatalf("seed %d stream %d draw %d: uint64n(%d) = %d, rand.Rand says %d", seed, id, i, n, g, w)
				}
				lo, w := -int64(i), -int64(i) // between draws nothing for a one-value range
				if n > 1 {
					w += want.Int64N(n)
				}
				if g := between(&got, lo, lo+n-1); g != w {
					t.Fatalf("seed %d stream %d draw %d: between(%d, %d) = %d, rand.Rand says %d", seed, id, i, lo, lo+n-1, g, w)
				}
				ppm := uint32(n % 1_000_001)
				if g, w := chance(&got, ppm), ppm > 0 && want.Uint32N(1_000_000) < ppm; g != w {
					t.Fatalf("seed %d stream %d draw %d: chance(%d) = %v, rand.Rand says %v", seed, id, i, ppm, g, w)
				}
			}
		}
	}
}

// Rejection (lo < thresh) is rare for small bounds; with n just above 2^63
// almost half of all draws are rejected, so the retry loop runs often here.
func TestStreamRejectionLoopMatchesRandRand(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		got, want := newStream(seed, 9), newAlgoStream(seed, 9)
		for _, n := range []uint64{1<<63 + 1, 1<<63 + 3, math.MaxUint64, math.MaxUint64 / 3 * 2} {
			for i := 0; i < 20; i++ {
				if g, w := got.uint64n(n), want.Uint64N(n); g != w {
					t.Fatalf("seed %d: uint64n(%d) = %d, rand.Rand says %d", seed, n, g, w)
				}
			}
		}
	}
}
