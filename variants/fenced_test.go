package variants

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/algorithm/algotest"
)

func mustLookup(t *testing.T, name string) algorithm.Variant {
	t.Helper()
	v, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Each holder in turn misses a different node. A bare maximum over the
// replies would hand the third holder 2 again (n1:2, n3:2 after b's n2:2);
// the catch-up makes it 3.
func TestFencedTokensIncreaseWhenNodesLag(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	var last uint64
	for i, down := range []int{2, 0, 1} {
		for j, n := range w.Nodes {
			n.Down = j == down
		}
		env := w.NewEnv("h1", "h1/t0", uint64(i))
		lock := fenced.New()
		g := lock.Acquire(env, "k")
		if !g.Granted || !g.HasToken {
			t.Fatalf("holder %d: %+v", i, g)
		}
		if g.Token <= last {
			t.Fatalf("holder %d: token %d after %d", i, g.Token, last)
		}
		last = g.Token
		lock.Release(env, "k", g)
	}
}

// Property: across random down nodes and lost replies, every granted token
// is greater than every earlier holder's, whether the earlier holder released
// or its lock expired.
func TestFencedTokensStrictlyIncrease(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 2))
		w := algotest.NewWorld(3 + 2*r.IntN(2))
		w.CallCost = time.Millisecond
		var last uint64
		grants := 0
		for step := range 30 {
			for _, n := range w.Nodes {
				n.Down = r.IntN(4) == 0
				n.LoseReplies = r.IntN(6) / 5
			}
			env := w.NewEnv("h1", "h1/t0", seed*100+uint64(step))
			lock := fenced.New()
			g := lock.Acquire(env, "k")
			if g.Granted {
				grants++
				if g.Token <= last {
					t.Fatalf("seed %d step %d: token %d after %d", seed, step, g.Token, last)
				}
				last = g.Token
				if r.IntN(2) == 0 {
					lock.Release(env, "k", g)
				}
			}
			w.Clock += algorithm.OriginalTTL + time.Second // whatever is left has expired
		}
		if grants == 0 {
			t.Fatalf("seed %d: no grant in 30 tries", seed)
		}
	}
}

// Fewer than a majority of counters answer: the acquire fails and the lock
// items are given back.
func TestFencedFailsWithoutAMajorityOfCounters(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.BeforeCall = func(n *algotest.Node, what string) {
		if (strings.HasPrefix(what, "incr ") || strings.HasPrefix(what, "raise ")) && n.Name() != "n1" {
			n.Down = true
		}
	}
	g := fenced.New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k")
	if g.Granted {
		t.Fatalf("granted with one counter of three: %+v", g)
	}
	if it, ok := w.Nodes[0].Item("k_lock"); ok {
		t.Fatalf("n1 still holds %+v", it)
	}
}

// A catch-up survives lost replies: the key has moved to two nodes whose
// counters lag far behind the third's, and every other increment on them
// loses its reply. Giving up at the first lost reply left no majority of
// caught-up counters, ever.
func TestFencedCatchUpSurvivesLostReplies(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	env := w.NewEnv("h1", "h1/t0", 1)
	for range 100 {
		if _, err := w.Nodes[0].Increment("k_fence"); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	w.BeforeCall = func(n *algotest.Node, what string) {
		if (strings.HasPrefix(what, "incr ") || strings.HasPrefix(what, "raise ")) && n.Name() != "n1" {
			if calls++; calls%2 == 0 {
				n.LoseReplies = 1
			}
		}
	}
	g := fenced.New().Acquire(env, "k")
	if !g.Granted || g.Token>>32 <= 100 {
		t.Fatalf("want a grant with a counter above 100 despite lost replies, got %+v", g)
	}
}

// Two acquisitions that draw the same counter (here: a fresh replica set
// each, so both count from 1) still get different tokens, so the resource
// can never accept both: equal tokens are the only way two holders both
// slip an access past it.
func TestFencedTokensAreUniqueWhenCountersRepeat(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	seen := map[uint64]bool{}
	for i := range 50 {
		w := algotest.NewWorld(3)
		w.CallCost = time.Millisecond
		g := fenced.New().Acquire(w.NewEnv("h1", "h1/t0", uint64(i)), "k")
		if !g.Granted || g.Token>>32 != 1 {
			t.Fatalf("acquisition %d: want counter 1, got %+v", i, g)
		}
		if seen[g.Token] {
			t.Fatalf("acquisition %d repeats token %#x", i, g.Token)
		}
		seen[g.Token] = true
	}
}

// A grant whose validity ran out while its token was drawn is given back,
// not returned: nobody could use it, and its holder would believe it for no
// time at all while the next holder may already draw the same counter.
func TestFencedRefusesAGrantThatExpiredDuringTheDraw(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	w.BeforeCall = func(n *algotest.Node, what string) {
		if strings.HasPrefix(what, "incr ") {
			w.Clock += 30 * time.Second // a pause during the draw
		}
	}
	g := fenced.New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k")
	if g.Granted {
		t.Fatalf("granted with no validity left: %+v", g)
	}
	for _, n := range w.Nodes {
		if it, ok := n.Item("k_lock"); ok {
			t.Fatalf("%s still holds %+v", n.Name(), it)
		}
	}
}

// A counter that lags by a thousand, as after a wiped restart, is caught
// up in one call: a thousand increments at 10 ms each outlast a TTL of a
// few seconds, which starved waiters in 8 of 100,000 seeds of the default
// sweep.
func TestFencedCatchesUpALaggingCounterInOneCall(t *testing.T) {
	w := algotest.NewWorld(3)
	w.CallCost = 10 * time.Millisecond
	for range 1000 {
		w.Nodes[0].Increment("k_fence")
	}
	w.Nodes[1].Down = true
	env := w.NewEnv("h1", "h1/t0", 1)
	start := w.Clock
	g := mustLookup(t, "fenced").New().Acquire(env, "k")
	if took := w.Clock - start; took > time.Second {
		t.Fatalf("the acquire took %s", took)
	}
	if !g.Granted || g.Token>>tokenTieBits != 1001 {
		t.Fatalf("want a grant with counter 1001, got %+v", g)
	}
	raises := 0
	for _, l := range w.Log {
		if strings.Contains(l, " raise ") {
			raises++
		}
	}
	if raises != 1 {
		t.Fatalf("%d raise calls, want 1:\n%s", raises, strings.Join(w.Log, "\n"))
	}
}
