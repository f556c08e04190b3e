package model

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// starved: h0 holds from 0 to 10s; from 11s h1 tries every second and is
// refused every time until the run ends at 300s. TTL 60s: bound 180s.
func starved() *builder {
	b := newBuilder("h0/t0", "h1/t0").acquire(0, 0).release(10000, 0)
	for ms := int64(11000); ms < 300000; ms += 1000 {
		b.call(ms, 1).deny(ms+10, 1)
	}
	return b.endAt(300000)
}

func TestLivenessWindowAfterHealFound(t *testing.T) {
	h := starved().h
	h.Healed = 5000
	v, found := CheckLiveness(h, DefaultCheckOptions().LivenessBound(h))
	want := "h1/t0 waited 289.000s from 11.000s with nobody holding the lock, until the run ended (the liveness bound is 180.000s)"
	if !found || v.Kind != Liveness || v.Time != 11000e6 || !slices.Equal(v.Clients, []int{1}) || v.Story != want {
		t.Fatalf("got %+v (found %v)", v, found)
	}
}

func TestLivenessJudgedOnlyFromHealed(t *testing.T) {
	h := starved().h
	h.Healed = 200000e6 // 100s left after healing: within the bound
	if v, found := CheckLiveness(h, 180e9); found {
		t.Fatalf("window mostly under faults judged: %v", v.Story)
	}
	// A lock still stuck long after healing is a finding, timed at Healed.
	h.Healed = 100000e6
	v, found := CheckLiveness(h, 180e9)
	if !found || v.Time != 100000e6 {
		t.Fatalf("stuck lock after heal: %+v (found %v)", v, found)
	}
	if LongestNoHolder(h) != 289e9 {
		t.Fatalf("longest no-holder window %d, want 289s over the whole run", LongestNoHolder(h))
	}
}

func TestLivenessWindowEndedBeforeHealIsNotJudged(t *testing.T) {
	b := newBuilder("h0/t0", "h1/t0").acquire(0, 0).release(10000, 0)
	for ms := int64(11000); ms < 250000; ms += 1000 {
		b.call(ms, 1).deny(ms+10, 1)
	}
	h := b.acquire(250000, 1).endAt(300000).h
	h.Healed = 260000e6
	if v, found := CheckLiveness(h, 180e9); found {
		t.Fatalf("window that ended before healing judged: %v", v.Story)
	}
	h.Healed = 0
	if _, found := CheckLiveness(h, 180e9); !found {
		t.Fatal("the same window with no faults must be found")
	}
}

func TestWindowStartsWithAnAttemptNotWithTheGap(t *testing.T) {
	// h1 was refused at 9s while h0 held; it backs off and only tries again
	// at 12s, granted at 12.050s. h0 released at 10s. The lock was free for
	// 2.05s but h1 was not waiting on it until 12s.
	h := newBuilder("h0/t0", "h1/t0").
		acquire(0, 0).call(9000, 1).deny(9010, 1).release(10000, 0).
		call(12000, 1).grant(12050, 1).endAt(20000).h
	w := NoHolderWindows(h)
	if len(w) != 1 || w[0].Start != 12000e6 || w[0].End != 12050e6 || !w[0].Granted {
		t.Fatalf("windows %+v, want one [12s, 12.05s] ending in a grant", w)
	}
}

func TestWindowStartsWhenTheGapOpensUnderAnAttemptInFlight(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").
		acquire(0, 0).call(9500, 1).release(10000, 0).deny(10500, 1).
		call(11000, 1).grant(11010, 1).endAt(20000).h
	w := NoHolderWindows(h)
	if len(w) != 1 || w[0].Start != 10000e6 || w[0].End != 11010e6 {
		t.Fatalf("windows %+v, want one [10s, 11.01s]", w)
	}
}

func TestWindowEndsWhenTheLastWaiterStops(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").
		acquire(0, 0).release(1000, 0).
		call(2000, 1).deny(2010, 1).call(3000, 1).stop(3500, 1).endAt(10000).h
	w := NoHolderWindows(h)
	if len(w) != 1 || w[0].Start != 2000e6 || w[0].End != 3500e6 || w[0].Granted {
		t.Fatalf("windows %+v, want one [2s, 3.5s] not granted", w)
	}
}

// With Reach recorded, only the time a waiter could make progress counts:
// a majority reachable for 200 s of the 289 s wait breaks a 180 s bound,
// for 150 s it does not; the violation says when the bound was passed.
func TestLivenessCountsOnlyReachableTime(t *testing.T) {
	h := starved().h
	h.Reachable = true
	h.Reach = []Reach{{Client: 1, From: 50e9, To: 250e9}} // 200 s
	v, found := CheckLiveness(h, 180e9)
	if !found || v.Time != 50e9 || v.End != 230e9 {
		t.Fatalf("got %+v (found %v), want a violation from 50s, past the bound at 230s", v, found)
	}
	h.Reach = []Reach{{Client: 1, From: 50e9, To: 120e9}, {Client: 1, From: 200e9, To: 280e9}} // 150 s
	if v, found := CheckLiveness(h, 180e9); found {
		t.Fatalf("150 s reachable judged against 180 s: %v", v.Story)
	}
	// Time a client that is not waiting could make progress counts for nothing.
	h.Reach = []Reach{{Client: 0, From: 0, To: 300e9}}
	if v, found := CheckLiveness(h, 180e9); found {
		t.Fatalf("the holder's reach, while only h1 waited, judged: %v", v.Story)
	}
	// A wait under faults the whole time (nothing reachable) is no violation.
	h.Reach = nil
	if v, found := CheckLiveness(h, 180e9); found {
		t.Fatalf("nothing reachable, yet: %v", v.Story)
	}
}

// An item left by a failed acquire counts from the acquire's return; one
// of a granted acquire from its hold's end; past the bound it is reported.
func TestLeftoverItemsAreReported(t *testing.T) {
	b := newBuilder("h0/t0", "h1/t0").call(1000, 0).deny(1100, 0).acquire(2000, 1).release(5000, 1).endAt(600000)
	h := b.h
	h.LongItems = []ItemLife{{Node: "n1", Owner: "h0", Client: 0, From: 1050e6, To: 600000e6}}
	v, found := checkLeftovers(h, Attempts(h), Holds(h), 180e9)
	if !found || v.Kind != Leftover || v.Time != 1100e6 || v.End != 181100e6 {
		t.Fatalf("got %+v (found %v)", v, found)
	}
	// The granted client's item is in use until its hold ends.
	h.LongItems = []ItemLife{{Node: "n1", Owner: "h1", Client: 1, From: 2000e6, To: 184000e6}}
	if v, found := checkLeftovers(h, Attempts(h), Holds(h), 180e9); found {
		t.Fatalf("an item that stayed 179 s after its hold ended reported: %v", v.Story)
	}
}

// With fencing, a holder the resource refuses is no holder: two clients
// that take turns for 30 s, every one of their holds refused (their tokens
// went backwards), starve as surely as if nobody were granted; the same
// history without refusals, or without fencing, is live.
func TestRefusedHoldersStarve(t *testing.T) {
	build := func(ok bool) History {
		b := newBuilder("h0/t0", "h1/t0")
		b.acquire(0, 0).read(1, 0, 0, true).write(2, 0, 1, true).release(3, 0)
		for ms := int64(1000); ms < 31000; ms += 1000 {
			c := int(ms/1000) % 2
			b.call(ms-500, 1-c).deny(ms-400, 1-c) // the other one waits
			b.acquire(ms, c).read(ms+1, c, 1, ok).release(ms+2, c)
		}
		b.call(30800, 0).deny(30900, 0).endAt(31000)
		h := resequenceByTime(b.h)
		h.Fenced = true
		return h
	}
	bound := 10 * time.Second
	v, found := CheckLiveness(build(false), bound)
	if !found || !strings.Contains(v.Story, "but holders the resource refused") {
		t.Fatalf("refused holders for 30s: %v, %q", found, v.Story)
	}
	if _, found := CheckLiveness(build(true), bound); found {
		t.Fatal("holders the resource let in starve")
	}
	unfenced := build(false)
	unfenced.Fenced = false
	if _, found := CheckLiveness(unfenced, bound); found {
		t.Fatal("without fencing a refused access is counted against the lock")
	}
	if got := len(NoHolderWindows(build(false))); got != 1 {
		t.Fatalf("%d no-holder windows, want one from the first refused hold on", got)
	}
}

// One Checker checks a fenced history with no refusal and then one with
// refusals as fresh Checkers do: the holds it leaves out live in their own
// memory, never in the holds' (they once shared it, and the second check
// read holds it was overwriting).
func TestCheckerReusedAcrossRefusals(t *testing.T) {
	plain := newBuilder("h0/t0", "h1/t0")
	for ms := int64(0); ms < 30000; ms += 1000 {
		c := int(ms/1000) % 2
		plain.call(ms-500, 1-c).deny(ms-400, 1-c).acquire(ms, c).read(ms+1, c, 0, true).release(ms+2, c)
	}
	ok := resequenceByTime(plain.endAt(31000).h)
	ok.Fenced = true
	refused := ok
	refused.Events = slices.Clone(ok.Events)
	for i := range refused.Events {
		if refused.Events[i].Kind == ResourceRead && refused.Events[i].Time > 2e9 && refused.Events[i].Time < 20e9 {
			refused.Events[i].Accepted = false
		}
	}
	opts := DefaultCheckOptions()
	opts.LivenessBoundNS = int64(10 * time.Second)
	var reused Checker
	for _, h := range []History{ok, refused, ok, refused} {
		got, want := reused.Check(h, opts), new(Checker).Check(h, opts)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("a reused Checker says %v, a fresh one %v", got.Violations, want.Violations)
		}
	}
	if v := new(Checker).Check(refused, opts); len(v.Violations) == 0 {
		t.Fatal("the refused holders starve nobody")
	}
}
