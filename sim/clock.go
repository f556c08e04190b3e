package sim

import (
	"slices"
	"sort"

	"github.com/locksim/locksim/faults"
)

// reading is an instant on one process's own clock, a node's or a host's:
// what local returns. Every other instant in the simulator (the queue's,
// the history's, the world's int64 times) is true time, which no process
// can read. The two are different types so that the compiler refuses the
// confusion the post's bug 2 is made of: a reading goes to true time only
// through trueAt, and true time to a reading only through local. A host's
// local time zone is a third clock, added on top in Env.LocalNow (zone).
type reading int64

// clock is one process's local clock:
//
//	local(t) = t + offset + t*driftPPM/1e6 + (sum of jumps at or before t)
//
// Jumps come from the plan and are known before the run starts, so the
// clock is a pure function of true time and can be inverted (trueAt).
type clock struct {
	offset   int64
	driftPPM int64 // > -1e6: the clock never runs backwards between jumps
	jumps    []jump
	// sums[i] is the sum of the deltas of jumps[0..i]: local finds the
	// jumps at or before t by binary search, not by adding them up.
	sums []int64
}

type jump struct{ at, delta int64 }

// addJump adds a jump, after those at or before at (in the order added):
// at the end for a plan's jumps, which come sorted.
func (c *clock) addJump(at, delta int64) {
	i := c.jumpsUpTo(at)
	c.jumps = slices.Insert(c.jumps, i, jump{at, delta})
	c.sums = slices.Insert(c.sums, i, 0)
	for ; i < len(c.sums); i++ {
		c.sums[i] = c.jumps[i].delta
		if i > 0 {
			c.sums[i] += c.sums[i-1]
		}
	}
}

// jumpsUpTo is how many jumps are at or before true time t.
func (c *clock) jumpsUpTo(t int64) int {
	if n := len(c.jumps); n == 0 || c.jumps[n-1].at <= t {
		return n // most clocks: no jumps, or none after t
	}
	return sort.Search(len(c.jumps), func(i int) bool { return c.jumps[i].at > t })
}

func (c *clock) driftAt(t int64) int64 { return faults.DriftAt(c.driftPPM, t) }

// local is the reading at true time t. A clock that neither drifts nor
// jumps (most) costs no call: drift and jumps are added out of line
// (sums has an entry for each jump).
func (c *clock) local(t int64) reading {
	if c.driftPPM|int64(len(c.sums)) == 0 {
		return reading(t + c.offset)
	}
	return reading(t+c.offset) + c.skew(t)
}

// skew is what drift and the jumps at or before t add to the reading.
func (c *clock) skew(t int64) reading {
	d := reading(c.driftAt(t))
	if k := c.jumpsUpTo(t); k > 0 {
		d += reading(c.sums[k-1])
	}
	return d
}

// trueAt is the earliest true time >= from at which the reading is >= x,
// or -1 if it never is (a clock jumped backwards forever is impossible: the
// last segment always grows, so -1 only means "beyond 2^61 ns", 73 years).
func (c *clock) trueAt(x reading, from int64) int64 {
	if c.local(from) >= x {
		return from
	}
	segStart := from
	for i := c.jumpsUpTo(from); i <= len(c.jumps); i++ {
		// The last segment ends far past any run (73 years) but low enough that
		// a clock running at twice true time (drift 1e6 ppm) does not overflow.
		segEnd := int64(1 << 61)
		if i < len(c.jumps) {
			if c.jumps[i].at <= from {
				continue
			}
			segEnd = c.jumps[i].at
		}
		// Within [segStart, segEnd) local is strictly increasing: binary search.
		if c.local(segEnd-1) >= x {
			lo, hi := segStart, segEnd-1
			for lo < hi {
				mid := lo + (hi-lo)/2
				if c.local(mid) >= x {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			return lo
		}
		if i < len(c.jumps) && c.local(segEnd) >= x {
			return segEnd
		}
		segStart = segEnd
	}
	return -1
}
