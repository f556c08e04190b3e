package algorithm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/algorithm/algotest"
)

// The original's quorum `(successfulLocks/2) >= (topology.Count/2)` with
// integer division: the table is what the expression says, bugs included.
func TestOriginalQuorumAsWritten(t *testing.T) {
	cases := []struct {
		replication, up int
		granted         bool
	}{
		{1, 0, true}, // 0/2 >= 1/2: granted with zero locks
		{1, 1, true},
		{2, 0, false}, // 0/2 >= 2/2 is false
		{2, 1, false}, // 1/2 = 0: one of two is not enough
		{2, 2, true},
		{3, 1, false},
		{3, 2, true}, // 2 of 3
		{3, 3, true},
		{4, 2, false},
		{4, 3, false}, // 3/2 = 1 < 2: a majority is not enough
		{4, 4, true},  // needs all four
		{5, 2, false},
		{5, 3, false}, // 3/2 = 1 < 5/2 = 2: a majority is not enough
		{5, 4, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-of-%d", c.up, c.replication), func(t *testing.T) {
			w := algotest.NewWorld(c.replication)
			for _, n := range w.Nodes[c.up:] {
				n.Down = true
			}
			g := algorithm.Original{}.Acquire(w.NewEnv("h1", "h1/t0", 1), "k")
			if g.Granted != c.granted {
				t.Fatalf("granted = %v, want %v", g.Granted, c.granted)
			}
		})
	}
}

// currentServerName is the identity: two threads on one host both get the
// lock, and either one's ClearLock removes both's items.
func TestOriginalThreadsOnOneHostShareTheLock(t *testing.T) {
	w := algotest.NewWorld(3)
	a := w.NewEnv("h1", "h1/t0", 1)
	b := w.NewEnv("h1", "h1/t1", 2)
	ga := algorithm.Original{}.Acquire(a, "k")
	gb := algorithm.Original{}.Acquire(b, "k")
	if !ga.Granted || !gb.Granted {
		t.Fatalf("granted a=%v b=%v, want both (shared host name)", ga.Granted, gb.Granted)
	}
	algorithm.Original{}.Release(b, "k", gb)
	for _, n := range w.Nodes {
		if _, ok := n.Item("k_lock"); ok {
			t.Fatalf("%s still holds a's item after b released", n.Name())
		}
	}
}

// HasExpired compares the writer's clock with the reader's: a reader whose
// clock is ahead scavenges a lock that is live on the writer's clock.
func TestOriginalScavengesByReadersClock(t *testing.T) {
	w := algotest.NewWorld(3)
	writer := w.NewEnv("h1", "h1/t0", 1)
	reader := w.NewEnv("h2", "h2/t0", 2)
	reader.Offset = 2 * time.Minute // the reader's clock is two minutes ahead
	if !(algorithm.Original{}).Acquire(writer, "k").Granted {
		t.Fatal("writer not granted")
	}
	w.Clock += time.Second // one second into a one-minute lock
	g := algorithm.Original{}.Acquire(reader, "k")
	if !g.Granted {
		t.Fatal("reader not granted: want the live lock scavenged by the reader's clock")
	}
	for _, n := range w.Nodes {
		if it, _ := n.Item("k_lock"); it.Owner != "h2" {
			t.Fatalf("%s holds %q, want the reader's item", n.Name(), it.Owner)
		}
	}
}

// An item whose expiry is before the reader's clock is removed by version,
// and the acquire retries; a live one stops the scavenge.
func TestOriginalScavengeRemovesOnlyExpired(t *testing.T) {
	w := algotest.NewWorld(3)
	w.Clock = 10 * time.Minute
	for _, n := range w.Nodes {
		n.Put("k_lock", "h9", w.Clock-time.Nanosecond)
	}
	env := w.NewEnv("h1", "h1/t0", 1)
	if !(algorithm.Original{}).ScavengeExpiredLocks(env, "k_lock") {
		t.Fatal("scavenge of expired items returned false")
	}
	for _, n := range w.Nodes {
		if _, ok := n.Item("k_lock"); ok {
			t.Fatalf("%s kept an expired item", n.Name())
		}
	}
	w.Nodes[1].Put("k_lock", "h9", w.Clock+time.Second)
	if (algorithm.Original{}).ScavengeExpiredLocks(env, "k_lock") {
		t.Fatal("scavenge returned true over a live item")
	}
}

// On KeyAlreadyExists without a scavenge, the original gives up at once and
// leaves the items it already wrote: the partial-lock bug.
func TestOriginalLeavesPartialLocks(t *testing.T) {
	w := algotest.NewWorld(3)
	w.Nodes[1].Put("k_lock", "h9", time.Hour)
	env := w.NewEnv("h1", "h1/t0", 1)
	if (algorithm.Original{}).Acquire(env, "k").Granted {
		t.Fatal("granted over a live foreign item")
	}
	if it, ok := w.Nodes[0].Item("k_lock"); !ok || it.Owner != "h1" {
		t.Fatalf("n1 item = %+v, %v; want h1's partial lock left behind", it, ok)
	}
	if _, ok := w.Nodes[2].Item("k_lock"); ok {
		t.Fatal("n3 was written: the original returns on the first KeyAlreadyExists")
	}
}

// Recursion is bounded by MaxDepth: when an expired foreign item keeps
// coming back before every write, LockKey scavenges and retries at depths
// 0..3, then returns false.
func TestOriginalRecursionDepth(t *testing.T) {
	w := algotest.NewWorld(1)
	env := w.NewEnv("h1", "h1/t0", 1)
	writes := 0
	w.BeforeCall = func(n *algotest.Node, what string) {
		if strings.HasPrefix(what, "write ") {
			writes++
			n.Put("k_lock", "h9", -time.Second)
		}
	}
	if (algorithm.Original{}).LockKey(env, "k", 0) {
		t.Fatal("granted over a foreign item present at every write")
	}
	if writes != 1+algorithm.OriginalMaxDepth {
		t.Fatalf("writes = %d, want %d (depths 0..3)", writes, 1+algorithm.OriginalMaxDepth)
	}
}
