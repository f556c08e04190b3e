package variants

import (
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm/algotest"
)

// fix-clock may meet its host's own item from an earlier acquisition, close
// to expiring on the node. Counting it as written without restarting its TTL
// granted the lock on items that vanished a moment later, and another client
// took the lock (locksim found it: fix-clock, class loss, seed 176). The
// reused item must live a full TTL from the acquire.
func TestFixClockRestartsTheTTLOfAnEarlierOwnItem(t *testing.T) {
	w := algotest.NewWorld(3)
	for _, n := range w.Nodes {
		n.SetIfAbsentTTL("k_lock", "h1", time.Minute) // an earlier attempt's items
	}
	w.Clock += 59 * time.Second // one second left on every node
	env := w.NewEnv("h1", "h1/t0", 1)
	if !mustLookup(t, "fix-clock").New().Acquire(env, "k").Granted {
		t.Fatal("not granted on its own host's items")
	}
	w.Clock += 2 * time.Second // the old items would have expired by now
	other := mustLookup(t, "fix-clock").New().Acquire(w.NewEnv("h2", "h2/t0", 2), "k")
	if other.Granted {
		t.Fatal("h2 granted while h1 holds: the reused items kept their old TTL")
	}
}
