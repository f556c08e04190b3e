package variants

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"

	"github.com/locksim/locksim/algorithm/algotest"
)

// The validity deadline is start + TTL - margin on the holder's clock,
// however long the acquire took.
func TestCorrectedValidity(t *testing.T) {
	for _, name := range []string{"fix-validity", "corrected", "redlock"} {
		t.Run(name, func(t *testing.T) {
			w := algotest.NewWorld(3)
			w.CallCost = 7 * time.Millisecond
			env := w.NewEnv("h1", "h1/t0", 1)
			env.Offset = -time.Hour // the holder's own clock is what counts
			start := env.Now()
			g := mustLookup(t, name).New().Acquire(env, "k")
			if want := start + algorithm.OriginalTTL - driftMargin(algorithm.OriginalTTL); !g.Granted || g.ValidUntil != want {
				t.Fatalf("grant %+v, want ValidUntil %v", g, want)
			}
		})
	}
}

// corrected writes every server: a foreign item on the first node does not
// stop it from taking the other two.
func TestCorrectedTriesAllServers(t *testing.T) {
	w := algotest.NewWorld(3)
	w.Nodes[0].SetIfAbsentTTL("k_lock", "h9", time.Hour)
	g := mustLookup(t, "corrected").New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k")
	if !g.Granted {
		t.Fatal("not granted with two of three nodes free")
	}
}

// corrected retries a failed attempt three times after a random backoff,
// twice as long after each failure, and leaves nothing behind.
func TestCorrectedRetriesWithBackoff(t *testing.T) {
	w := algotest.NewWorld(3)
	for _, n := range w.Nodes[1:] {
		n.SetIfAbsentTTL("k_lock", "h9", time.Hour)
	}
	w.Log = nil
	env := w.NewEnv("h1", "h1/t0", 1)
	if mustLookup(t, "corrected").New().Acquire(env, "k").Granted {
		t.Fatal("granted while another host holds two of three nodes")
	}
	if len(env.Slept) != 3 {
		t.Fatalf("slept %v, want three backoffs", env.Slept)
	}
	for i, d := range env.Slept {
		if lo, hi := retryDelayMin<<i, (retryDelayMin+retryDelaySpread)<<i; d < lo || d >= hi {
			t.Fatalf("backoff %d: %v outside [%v, %v)", i, d, lo, hi)
		}
	}
	if env.Slept[0] == env.Slept[1] && env.Slept[1] == env.Slept[2] {
		t.Fatalf("backoffs %v are not random", env.Slept)
	}
	if it, ok := w.Nodes[0].Item("k_lock"); ok {
		t.Fatalf("n1 still holds %+v", it)
	}
}

// A unique owner: two acquisitions of one thread never share an identity.
func TestCorrectedOwnerIsPerAcquisition(t *testing.T) {
	w := algotest.NewWorld(3)
	env := w.NewEnv("h1", "h1/t0", 1)
	lock := mustLookup(t, "corrected").New()
	g1 := lock.Acquire(env, "k")
	lock.Release(env, "k", g1)
	g2 := lock.Acquire(env, "k")
	if g1.Owner == g2.Owner || !strings.HasPrefix(g1.Owner, "h1/h1/t0/") {
		t.Fatalf("owners %q and %q", g1.Owner, g2.Owner)
	}
}

// A release whose compare-and-delete is lost is sent again: an item left
// behind blocks the lock for a whole TTL, and under steady loss such items
// pile up faster than they expire. corrected and fenced retry; redlock, as
// specified, unlocks each master once.
func TestReleaseRetriesALostDelete(t *testing.T) {
	for name, retries := range map[string]bool{"corrected": true, "fenced": true, "redlock": false} {
		t.Run(name, func(t *testing.T) {
			w := algotest.NewWorld(3)
			w.CallCost = time.Millisecond
			env := w.NewEnv("h1", "h1/t0", 1)
			lock := mustLookup(t, name).New()
			g := lock.Acquire(env, "k")
			if !g.Granted {
				t.Fatal("not granted on a free lock")
			}
			lost := false
			w.BeforeCall = func(n *algotest.Node, what string) {
				n.Down = false
				if strings.HasPrefix(what, "cad ") && n.Name() == "n2" && !lost {
					n.Down, lost = true, true // the first delete sent to n2 is lost
				}
			}
			lock.Release(env, "k", g)
			_, left := w.Nodes[1].Item("k_lock")
			if !lost || left == retries {
				t.Fatalf("lost a delete: %v; n2 still holds the item: %v; want it held only without retries", lost, left)
			}
		})
	}
}

// A retry writes under a new identity: a delayed duplicate of the failed
// attempt's clear, landing after the retry's write, must not delete the
// retry's item. Here the first attempt takes n1 only (n2 and n3 hold
// another's items) and clears it; n2 frees up; the duplicate of the clear
// of n1 arrives just after the retry writes n1 again. With one identity
// for both attempts the grant held n2 alone, and another client could take
// n1 and n3.
func TestRetryOutlivesADuplicateOfTheFailedAttemptsClear(t *testing.T) {
	for _, name := range []string{"corrected", "fenced", "redlock"} {
		t.Run(name, func(t *testing.T) {
			w := algotest.NewWorld(3)
			w.CallCost = time.Millisecond
			w.Nodes[1].SetIfAbsentTTL("k_lock", "other", time.Hour)
			w.Nodes[2].SetIfAbsentTTL("k_lock", "other", time.Hour)
			var first string // the owner the first attempt wrote under
			setsOnN1, replayed, inHook := 0, false, false
			w.BeforeCall = func(n *algotest.Node, what string) {
				if inHook {
					return
				}
				f := strings.Fields(what)
				switch {
				case f[0] == "setnx" && n.Name() == "n1":
					setsOnN1++
					if setsOnN1 == 1 {
						first = f[2]
					}
				case f[0] == "cad" && n.Name() == "n3" && setsOnN1 == 1:
					inHook = true
					w.Nodes[1].CompareAndDelete("k_lock", "other") // n2 frees up
					inHook = false
				case setsOnN1 == 2 && !replayed:
					// The first call after the retry wrote n1: the
					// duplicate of the first attempt's clear of n1 lands.
					inHook, replayed = true, true
					_ = w.Nodes[0].CompareAndDelete("k_lock", first)
					inHook = false
				}
			}
			g := mustLookup(t, name).New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k")
			if !g.Granted || !replayed {
				t.Fatalf("want a grant on the retry with the duplicate replayed, got %+v (replayed %v)", g, replayed)
			}
			held := 0
			for _, n := range w.Nodes {
				if it, ok := n.Item("k_lock"); ok && it.Owner == g.Owner {
					held++
				}
			}
			if held < 2 {
				t.Fatalf("the grant holds %d of 3 nodes after the stale clear: a second client can take a majority", held)
			}
		})
	}
}

// With two replicas, an attempt that meets a foreign item on the first
// stops there: a majority (both) is out of reach, and writing the second
// would only split the vote with the holder (seed 1068 of class all).
func TestCorrectedStopsOnceAMajorityIsOutOfReach(t *testing.T) {
	w := algotest.NewWorld(2)
	w.Nodes[0].SetIfAbsentTTL("k_lock", "h9", time.Hour)
	env := w.NewEnv("h1", "h1/t0", 1)
	if mustLookup(t, "corrected").New().Acquire(env, "k").Granted {
		t.Fatal("granted with one of two nodes held by another host")
	}
	if it, ok := w.Nodes[1].Item("k_lock"); ok {
		t.Fatalf("n2 holds %+v", it)
	}
	for _, line := range w.Log {
		if strings.Contains(line, "n2 setnx") {
			t.Fatalf("wrote n2 once a majority was out of reach: %v", w.Log)
		}
	}
}

// A write whose reply was lost may have been applied; the failed attempt's
// delete may also have come before it. The client deletes such items
// again at its next acquire, so none stays behind for a TTL.
func TestCorrectedDeletesUnsureItemsAgain(t *testing.T) {
	w := algotest.NewWorld(3)
	w.Nodes[1].SetIfAbsentTTL("k_lock", "h9", time.Hour)
	w.Nodes[2].SetIfAbsentTTL("k_lock", "h9", time.Hour)
	w.Nodes[0].LoseReplies = 1 // the first write lands, its reply is lost
	lock := mustLookup(t, "corrected").New()
	env := w.NewEnv("h1", "h1/t0", 1)
	if lock.Acquire(env, "k").Granted {
		t.Fatal("granted while another host holds two of three nodes")
	}
	w.Log = nil
	lock.Acquire(env, "k")
	deletes := 0
	for _, line := range w.Log {
		if strings.Contains(line, "n1 cad") {
			deletes++
		}
	}
	if deletes == 0 {
		t.Errorf("the next acquire did not delete the item whose write timed out again: %v", w.Log)
	}
}

// A lock write whose reply was lost is asked again, and the item found
// there, its own, counts as written: with exactly a majority of three
// reachable, taking the lost reply for a refusal failed the attempt
// (fenced seed 70429 of the default sweep starved waiters so).
func TestCorrectedAsksAgainAfterALostWriteReply(t *testing.T) {
	w := algotest.NewWorld(3)
	w.Nodes[2].Down = true
	w.Nodes[1].LoseReplies = 1
	env := w.NewEnv("h1", "h1/t0", 1)
	g := mustLookup(t, "corrected").New().Acquire(env, "k")
	if !g.Granted || len(env.Slept) > 0 {
		t.Fatalf("granted %v after %d backoffs, want a grant in the first attempt:\n%s", g.Granted, len(env.Slept), strings.Join(w.Log, "\n"))
	}
	writes := 0
	for _, l := range w.Log {
		if strings.Contains(l, "n2") && strings.Contains(l, "set") {
			writes++
		}
	}
	if writes != 2 {
		t.Fatalf("%d writes to n2, want the lost one and one more:\n%s", writes, strings.Join(w.Log, "\n"))
	}
}
