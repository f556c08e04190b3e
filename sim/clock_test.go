package sim

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestClockLocalIsOffsetDriftAndJumps(t *testing.T) {
	c := clock{offset: 5_000, driftPPM: 100} // 100 ppm fast: +100ns per ms
	c.addJump(int64(2*time.Second), -int64(time.Second))
	c.addJump(int64(time.Second), int64(time.Minute)) // added out of order on purpose
	for _, tc := range []struct {
		at, want int64
		why      string
	}{
		{0, 5_000, "offset only at the epoch"},
		{int64(time.Millisecond), int64(time.Millisecond) + 5_000 + 100, "drift: 100ns per ms"},
		{int64(time.Second) - 1, int64(time.Second) - 1 + 5_000 + 99_999, "just before the first jump"},
		{int64(time.Second), int64(time.Second) + 5_000 + 100_000 + int64(time.Minute), "a jump counts from its instant on"},
		{int64(2 * time.Second), int64(2*time.Second) + 5_000 + 200_000 + int64(time.Minute) - int64(time.Second), "jumps add up, backwards too"},
	} {
		if got := c.local(tc.at); got != reading(tc.want) {
			t.Errorf("local(%d) = %d, want %d (%s)", tc.at, got, tc.want, tc.why)
		}
	}
}

// Between jumps a clock never runs backwards, even at the most negative drift
// the plan allows and with the integer rounding of drift.
func TestClockNeverRunsBackwardsBetweenJumps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := clock{offset: rapid.Int64Range(-1e12, 1e12).Draw(t, "offset"),
			driftPPM: rapid.Int64Range(-999_999, 1_000_000).Draw(t, "drift")}
		at := rapid.Int64Range(0, int64(24*time.Hour)).Draw(t, "at")
		step := rapid.Int64Range(1, 3_000_000).Draw(t, "step")
		if c.local(at+step) < c.local(at) {
			t.Fatalf("local(%d) = %d < local(%d) = %d", at+step, c.local(at+step), at, c.local(at))
		}
	})
}

// trueAt is the earliest true time at or after from at which the clock reads
// at least x: checked against a brute-force scan over a short horizon, with
// jumps both ways and drift up to doubling the clock's rate.
func TestClockTrueAtIsEarliestInstant(t *testing.T) {
	const horizon = 4_000
	rapid.Check(t, func(t *rapid.T) {
		c := clock{offset: rapid.Int64Range(-500, 500).Draw(t, "offset"),
			driftPPM: rapid.Int64Range(-999_999, 1_000_000).Draw(t, "drift")}
		for range rapid.IntRange(0, 4).Draw(t, "jumps") {
			c.addJump(rapid.Int64Range(1, horizon).Draw(t, "jump.at"), rapid.Int64Range(-1500, 1500).Draw(t, "jump.delta"))
		}
		from := rapid.Int64Range(0, horizon/2).Draw(t, "from")
		x := c.local(from) + reading(rapid.Int64Range(-100, 3000).Draw(t, "x-local(from)"))
		want := int64(-1)
		for at := from; at <= horizon; at++ {
			if c.local(at) >= x {
				want = at
				break
			}
		}
		got := c.trueAt(x, from)
		if want >= 0 && got != want {
			t.Fatalf("trueAt(%d, %d) = %d, want %d", x, from, got, want)
		}
		if want < 0 && (got <= horizon || c.local(got) < x || c.local(got-1) >= x) {
			t.Fatalf("trueAt(%d, %d) = %d: want the first instant past the horizon %d reading %d", x, from, got, horizon, x)
		}
	})
}

// A validity deadline on a fast clock is still found: the search must not
// overflow int64 at the largest drift a plan may set.
func TestClockTrueAtFastClockDoesNotOverflow(t *testing.T) {
	for _, drift := range []int64{200_000, 999_999, 1_000_000} {
		c := clock{offset: int64(3 * time.Minute), driftPPM: drift}
		x := reading(10 * time.Minute)
		got := c.trueAt(x, 0)
		if got < 0 || c.local(got) < x || (got > 0 && c.local(got-1) >= x) {
			t.Errorf("drift %d ppm: trueAt(10m) = %d (local %d), want the first instant reading 10m", drift, got, c.local(got))
		}
	}
}
