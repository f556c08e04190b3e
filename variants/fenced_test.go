package variants

import (
	"math/rand/v2"
	"slices"
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

// beforeTheEpoch sets env's clock an hour before the epoch, where it adds
// nothing to a token's high part: the counters alone carry the tokens, as
// they do whenever they are ahead of the holders' clocks (a clock ahead of
// the others raised them, or grants came faster than the milliseconds).
func beforeTheEpoch(env *algotest.Env) *algotest.Env {
	env.Offset = -time.Hour
	return env
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
		env := beforeTheEpoch(w.NewEnv("h1", "h1/t0", uint64(i)))
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
// or its lock expired; with the clock and with the counters alone.
func TestFencedTokensStrictlyIncrease(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	for seed := range uint64(600) {
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
			if seed%2 == 1 {
				beforeTheEpoch(env) // 30 steps of 61 s stay before the epoch
			}
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
	g := fenced.New().Acquire(beforeTheEpoch(env), "k")
	if !g.Granted || g.Token>>tokenTieBits <= 100 {
		t.Fatalf("want a grant with a counter above 100 despite lost replies, got %+v", g)
	}
}

// Two acquisitions that draw the same high part (here: a fresh replica set
// each, so both count from 1, and the same clock reading) still get
// different tokens, so the resource can never accept both: equal tokens are
// the only way two holders both slip an access past it.
func TestFencedTokensAreUniqueWhenCountersRepeat(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	seen := map[uint64]bool{}
	var high uint64
	for i := range 50 {
		w := algotest.NewWorld(3)
		w.CallCost = time.Millisecond
		g := fenced.New().Acquire(w.NewEnv("h1", "h1/t0", uint64(i)), "k")
		if i == 0 {
			high = g.Token >> tokenTieBits
		}
		if !g.Granted || g.Token>>tokenTieBits != high {
			t.Fatalf("acquisition %d: want high part %d, got %+v", i, high, g)
		}
		if seen[g.Token] {
			t.Fatalf("acquisition %d repeats token %#x", i, g.Token)
		}
		seen[g.Token] = true
	}
}

// The random tie bits are what tell apart two acquisitions that draw the
// same high part: without them (the token-no-tie-break mutant) the
// acquisitions of TestFencedTokensAreUniqueWhenCountersRepeat repeat one
// token, and the resource would let both holders in. Since the high part
// takes the holder's clock as well, a sweep rarely draws two equal high
// parts for overlapping holders, so this is where that mistake shows.
func TestFencedTieBitsTellRepeatedHighPartsApart(t *testing.T) {
	var first uint64
	for i := range 2 {
		w := algotest.NewWorld(3)
		w.CallCost = time.Millisecond
		mutant := fencedLock{lock: newDHTLock(correctedFixes, mutTokenNoTieBreak), mut: mutTokenNoTieBreak}
		g := mutant.Acquire(w.NewEnv("h1", "h1/t0", uint64(i)), "k")
		if !g.Granted {
			t.Fatalf("acquisition %d: %+v", i, g)
		}
		if i == 0 {
			first = g.Token
		} else if g.Token != first {
			t.Fatalf("without tie bits, two acquisitions of the same high part drew %#x and %#x: this world no longer repeats a high part", first, g.Token)
		}
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
		if strings.Contains(what, "k_fence") {
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
	env := beforeTheEpoch(w.NewEnv("h1", "h1/t0", 1))
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
		if strings.HasSuffix(l, " raise k_fence 1001") {
			raises++
		}
	}
	if raises != 1 {
		t.Fatalf("%d calls raised a counter to 1001, want 1:\n%s", raises, strings.Join(w.Log, "\n"))
	}
}

// Every copy of the counter is lost (every node restarts empty) between two
// grants. Counters alone then restart, and the second token was below the
// first: the resource refused every holder until the counters overtook the
// last token it let in, for minutes (413 of 100,000 seeds of the default
// sweep). The holder's clock, which the counters are raised to, keeps the
// tokens rising.
func TestFencedTokensRiseWhenEveryCounterIsLost(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	var last uint64
	for i := range 5 {
		env := w.NewEnv("h1", "h1/t0", uint64(i))
		lock := fenced.New()
		g := lock.Acquire(env, "k")
		if !g.Granted || g.Token <= last {
			t.Fatalf("holder %d before the wipe: token %#x after %#x (%+v)", i, g.Token, last, g)
		}
		last = g.Token
		lock.Release(env, "k", g)
		w.Clock += time.Second
	}
	for _, n := range w.Nodes {
		n.Restart()
	}
	g := fenced.New().Acquire(w.NewEnv("h2", "h2/t0", 9), "k")
	if !g.Granted || g.Token <= last {
		t.Fatalf("after every node restarted empty: token %#x, not above the last, %#x (%+v)", g.Token, last, g)
	}
}

// Without a wipe the counters alone keep tokens rising, whatever the
// clocks: a holder whose clock is a minute ahead raises a majority of the
// counters to its reading, and the next holder, whose clock is a minute
// behind, increments past it. Only after every copy of a counter is lost
// does a holder's clock matter, and then one behind waits for it.
func TestFencedTokensRiseWithoutWipesWhateverTheClocks(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	w.Clock = time.Hour
	ahead := w.NewEnv("h1", "h1/t0", 1)
	ahead.Offset = time.Minute
	lock := fenced.New()
	first := lock.Acquire(ahead, "k")
	if !first.Granted {
		t.Fatalf("first holder: %+v", first)
	}
	lock.Release(ahead, "k", first)
	w.Clock += time.Second
	behind := w.NewEnv("h2", "h2/t0", 2)
	behind.Offset = -time.Minute
	second := fenced.New().Acquire(behind, "k")
	if !second.Granted || second.Token <= first.Token {
		t.Fatalf("a holder whose clock is two minutes behind the last: token %#x after %#x (%+v)", second.Token, first.Token, second)
	}
	if got, want := second.Token>>tokenTieBits, first.Token>>tokenTieBits+1; got != want {
		t.Fatalf("high part %d, want the counters' %d", got, want)
	}
}

// While the clocks run ahead of the counters, as they do between holders a
// millisecond or more apart, drawing a token is one call to each node: a
// raise to the clock, with nothing to increment past and nobody to catch
// up. Incrementing every counter and then raising a majority to the clock
// made each acquire a round trip to a majority longer, and starved waiters
// at the edge of the loss bound (seed 69739).
func TestFencedDrawsWithOneCallPerNodeWhileClocksLead(t *testing.T) {
	fenced := mustLookup(t, "fenced")
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	var last uint64
	for i := range 3 {
		env := w.NewEnv("h1", "h1/t0", uint64(i))
		lock := fenced.New()
		from := len(w.Log)
		g := lock.Acquire(env, "k")
		if !g.Granted || g.Token <= last {
			t.Fatalf("holder %d: token %#x after %#x (%+v)", i, g.Token, last, g)
		}
		last = g.Token
		var calls []string
		for _, l := range w.Log[from:] {
			if strings.Contains(l, "k_fence") {
				calls = append(calls, l)
			}
		}
		if len(calls) != len(w.Nodes) || slices.ContainsFunc(calls, func(l string) bool { return !strings.Contains(l, " raise ") }) {
			t.Fatalf("holder %d: want one raise to each node, got:\n%s", i, strings.Join(calls, "\n"))
		}
		lock.Release(env, "k", g)
		w.Clock += time.Second
	}
}
