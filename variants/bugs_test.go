package variants

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/algorithm/algotest"
)

// A bug scenario runs one variant in a fresh fake world and reports whether
// the original's bug showed.
type bugScenario struct {
	name string
	show func(t *testing.T, v algorithm.Variant) bool
}

var bugScenarios = []bugScenario{
	{"zero-quorum", zeroQuorum},
	{"over-strict-quorum", overStrictQuorum},
	{"shared-host", sharedHost},
	{"no-validity", noValidity},
	{"skew-scavenge", skewScavenge},
	{"partial-left", partialLeft},
	{"amnesia", amnesia},
}

// The table is the spec: which variant shows which of the original's bugs.
// Each fix-* variant shows every bug but its own, except where noted.
var expectedBugs = map[string][]string{
	"original": {"zero-quorum", "over-strict-quorum", "shared-host", "no-validity", "skew-scavenge", "partial-left", "amnesia"},
	// Read literally, ClearLock clears nothing: every bug of the original,
	// and a release that leaves the item (TestEveryVariantGrantsAFreeLock).
	"original-literal": {"zero-quorum", "over-strict-quorum", "shared-host", "no-validity", "skew-scavenge", "partial-left", "amnesia"},
	"fix-quorum":       {"shared-host", "no-validity", "skew-scavenge", "partial-left", "amnesia"},
	"fix-identity":     {"zero-quorum", "over-strict-quorum", "no-validity", "skew-scavenge", "partial-left", "amnesia"},
	"fix-validity":     {"zero-quorum", "over-strict-quorum", "shared-host", "skew-scavenge", "partial-left", "amnesia"},
	"fix-clock":        {"zero-quorum", "over-strict-quorum", "shared-host", "no-validity", "partial-left", "amnesia"},
	"fix-partial":      {"zero-quorum", "over-strict-quorum", "shared-host", "no-validity", "skew-scavenge", "amnesia"},
	"fix-amnesia":      {"zero-quorum", "over-strict-quorum", "shared-host", "no-validity", "skew-scavenge", "partial-left"},
	"corrected":        {},
	// Lock level only: fenced promises the resource, which its tokens keep
	// safe, so it asks the deployment for no restart quarantine.
	"fenced":  {"amnesia"},
	"redlock": {},
	// etcd's mutex has no validity (the holder believes until it releases:
	// Jepsen's finding), and one node that restarts empty forgets every
	// key; fencing keeps the resource safe from both, not the lock.
	"etcd-mutex":  {"no-validity", "amnesia"},
	"etcd-fenced": {"no-validity", "amnesia"},
}

// inapplicable are the scenarios a variant's design has no place for: the
// etcd mutex keeps no items under the key's _lock name on several nodes.
var inapplicable = map[string][]string{
	"etcd-mutex":  {"partial-left"},
	"etcd-fenced": {"partial-left"},
}

func TestBugsShownByVariant(t *testing.T) {
	for _, v := range All() {
		want, ok := expectedBugs[v.Name]
		if !ok && places[v.Name].Family != Added {
			t.Fatalf("%s: no expectation", v.Name)
		}
		if !ok {
			continue // a reviewer's new variant: no expectation yet
		}
		for _, sc := range bugScenarios {
			if contains(inapplicable[v.Name], sc.name) {
				continue
			}
			t.Run(v.Name+"/"+sc.name, func(t *testing.T) {
				wantShown := contains(want, sc.name)
				if got := sc.show(t, v); got != wantShown {
					t.Fatalf("bug shown = %v, want %v", got, wantShown)
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// zeroQuorum: the key's only node is down; a grant is a lock held nowhere.
func zeroQuorum(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(1)
	w.Nodes[0].Down = true
	return v.New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k").Granted
}

// overStrictQuorum: three of four nodes up and free; a majority is refused.
func overStrictQuorum(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(4)
	w.Nodes[3].Down = true
	return !v.New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k").Granted
}

// sharedHost: two threads of one host both get the lock.
func sharedHost(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	a, b := w.NewEnv("h1", "h1/t0", 1), w.NewEnv("h1", "h1/t1", 2)
	return v.New().Acquire(a, "k").Granted && v.New().Acquire(b, "k").Granted
}

// noValidity: each call takes 25 s, so a quorum of three is reached after
// the one-minute items have expired; the bug is a grant that believes past
// its items' expiry.
func noValidity(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(3)
	w.CallCost = 25 * time.Second
	env := w.NewEnv("h1", "h1/t0", 1)
	start := env.Now()
	g := v.New().Acquire(env, "k")
	return g.Granted && (g.ValidUntil == 0 || g.ValidUntil > start+algorithm.OriginalTTL)
}

// skewScavenge: a reader whose clock is two minutes ahead tries one second
// into the writer's one-minute lock.
func skewScavenge(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	writer, reader := w.NewEnv("h1", "h1/t0", 1), w.NewEnv("h2", "h2/t0", 2)
	reader.Offset = 2 * time.Minute
	if !v.New().Acquire(writer, "k").Granted {
		t.Fatal("writer not granted on a free lock")
	}
	w.Clock += time.Second
	return v.New().Acquire(reader, "k").Granted
}

// partialLeft: another host holds two of three nodes; the first node takes
// this client's write but loses the reply. The bug is an item of this client
// left behind after the acquire failed.
func partialLeft(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	for _, n := range w.Nodes[1:] {
		n.Put("k_lock", "h9", time.Hour)
	}
	w.Nodes[0].LoseReplies = 1
	if v.New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k").Granted {
		t.Fatal("granted while another host holds two of three nodes")
	}
	for _, n := range w.Nodes {
		if it, ok := n.Item("k_lock"); ok && it.Owner != "h9" {
			return true
		}
	}
	return false
}

// amnesia: two of three nodes restart empty while a lock is held, the third
// is unreachable, and another host tries (the original gives up at the first
// KeyAlreadyExists, so only a lock whose reachable items all vanished shows it). The fake honours the envelope's RestartQuarantine the way the
// simulator does: a restarted node refuses every call for one TTL.
func amnesia(t *testing.T, v algorithm.Variant) bool {
	w := algotest.NewWorld(3)
	w.CallCost = time.Millisecond
	if !v.New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k").Granted {
		t.Fatal("first client not granted on a free lock")
	}
	for _, n := range w.Nodes[:2] {
		n.Restart()
		n.Down = v.Envelope.Quarantined()
	}
	w.Nodes[2].Down = true
	w.Clock += time.Second
	return v.New().Acquire(w.NewEnv("h2", "h2/t0", 2), "k").Granted
}

// The fixes do not stop a free lock from being granted, nor a released
// lock from being taken again, with one node down.
func TestEveryVariantGrantsAFreeLock(t *testing.T) {
	for _, v := range All() {
		t.Run(v.Name, func(t *testing.T) {
			w := algotest.NewWorld(3)
			w.CallCost = time.Millisecond
			w.Nodes[2].Down = true
			a, b := w.NewEnv("h1", "h1/t0", 1), w.NewEnv("h2", "h2/t0", 2)
			lock := v.New()
			ga := lock.Acquire(a, "k")
			if !ga.Granted {
				t.Fatal("a not granted on a free lock")
			}
			if v.New().Acquire(b, "k").Granted {
				t.Fatal("b granted while a holds the lock")
			}
			lock.Release(a, "k", ga)
			left := 0
			for _, n := range w.Nodes {
				if it, ok := n.Item("k_lock"); ok && strings.HasPrefix(it.Owner, "h1") {
					left++
				}
			}
			if v.Name == "original-literal" {
				// Its release reads and removes "k", never "k_lock": the
				// items stay until they expire.
				if left == 0 {
					t.Fatal("the literal reading's release cleared a's items")
				}
				w.Clock += 2 * time.Minute
			} else if left > 0 {
				t.Fatalf("%d nodes still hold a's item after release", left)
			}
			if !v.New().Acquire(b, "k").Granted {
				t.Fatal("b not granted after a released")
			}
		})
	}
}

func TestVariantMatrixIsPrintable(t *testing.T) {
	// Keeps the matrix readable in -v output for a reviewer.
	var b strings.Builder
	for _, v := range All() {
		fmt.Fprintf(&b, "%-13s %v\n", v.Name, expectedBugs[v.Name])
	}
	t.Log("\n" + b.String())
}
