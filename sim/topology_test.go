package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
)

func names(servers []algorithm.Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Name()
	}
	return out
}

// ringConfig: seven nodes placed by consistent hashing, the key on three.
func ringConfig() Config {
	c := netConfig()
	c.Placement, c.Nodes, c.Replication = PlacementRing, 7, 3
	return c
}

// On a ring every key has its own replica set, of the configured size,
// the same for every client, and some pair of keys differ.
func TestRingPlacesEachKeyOnItsOwnNodes(t *testing.T) {
	keys := []string{"k", "k_lock", "a", "b", "user:42", "user:42_lock"}
	views := map[string][2][]string{}
	runScripts(t, ringConfig(), faults.Plan{}, func(env algorithm.Env) {
		for _, k := range keys {
			v := views[k]
			v[0] = names(env.Topology(k))
			views[k] = v
		}
	}, func(env algorithm.Env) {
		for _, k := range keys {
			v := views[k]
			v[1] = names(env.Topology(k))
			views[k] = v
		}
	})
	differ := false
	for _, k := range keys {
		v := views[k]
		if len(v[0]) != 3 || slices.Compact(slices.Sorted(slices.Values(v[0]))) == nil || len(slices.Compact(slices.Sorted(slices.Values(v[0])))) != 3 {
			t.Errorf("key %q: replicas %v, want three distinct nodes", k, v[0])
		}
		if !slices.Equal(v[0], v[1]) {
			t.Errorf("key %q: client 0 sees %v, client 1 %v", k, v[0], v[1])
		}
		differ = differ || !slices.Equal(v[0], views["k"][0])
	}
	if !differ {
		t.Errorf("every key has the replicas of k (%v): the placement ignores the key", views["k"][0])
	}
}

// A topology change on a ring names its members; each key then lives on
// members only. An empty ring that lasts For gives every key no node, and
// the ring comes back as it was.
func TestRingMembershipChanges(t *testing.T) {
	c := ringConfig()
	plan := faults.Plan{Events: []faults.Event{
		{At: time.Second, Kind: faults.Topology, Nodes: []int{1, 4, 6}},
		{At: 2 * time.Second, Kind: faults.Topology, For: time.Second},
	}}
	var before, after, empty, back []string
	w := runScripts(t, c, plan, func(env algorithm.Env) {
		before = names(env.Topology("k"))
		env.Sleep(1500 * time.Millisecond)
		after = names(env.Topology("k"))
		env.Sleep(time.Second)
		empty = names(env.Topology("k"))
		env.Sleep(time.Second)
		back = names(env.Topology("k"))
	})
	slices.Sort(after)
	if !slices.Equal(after, []string{"n1", "n4", "n6"}) {
		t.Errorf("after the ring became n1, n4, n6 the key is on %v", after)
	}
	if len(empty) != 0 {
		t.Errorf("while the ring is empty the key is on %v", empty)
	}
	slices.Sort(back)
	if !slices.Equal(back, after) {
		t.Errorf("after the empty ring ended the key is on %v, want %v again (before both: %v)", back, after, before)
	}
	if len(w.hist.Moves) < 2 {
		t.Errorf("moves %+v: want the key's moves recorded", w.hist.Moves)
	}
}

// A change that spreads reaches clients at their own moments: for a while
// two clients see different replicas, and the move records until when.
func TestStaleTopologyViews(t *testing.T) {
	c := netConfig()
	c.Placement, c.Nodes, c.Replication, c.Hosts = PlacementFirst, 6, 3, 2
	plan := faults.Plan{Events: []faults.Event{{At: time.Second, Kind: faults.Topology, Nodes: []int{3, 4, 5}, Spread: 10 * time.Second}}}
	seen := [2][]int64{} // per client: when it first saw n3 first
	look := func(c int) func(env algorithm.Env) {
		return func(env algorithm.Env) {
			for range 120 {
				if env.Topology("k")[0].Name() == "n3" && len(seen[c]) == 0 {
					seen[c] = append(seen[c], int64(env.Now()))
				}
				env.Sleep(100 * time.Millisecond)
			}
		}
	}
	w := runScripts(t, c, plan, look(0), look(1))
	if len(seen[0]) == 0 || len(seen[1]) == 0 {
		t.Fatalf("a client never learnt of the change: %v", seen)
	}
	if seen[0][0] == seen[1][0] {
		t.Errorf("both clients learnt of the change at %s: it did not spread", fmtTime(seen[0][0]))
	}
	for c, s := range seen {
		if s[0] < int64(time.Second) || s[0] > int64(11*time.Second)+int64(100*time.Millisecond) {
			t.Errorf("client %d learnt at %s, outside [1s, 11s]", c, fmtTime(s[0]))
		}
	}
	if mv := w.hist.Moves; len(mv) != 1 || mv[0].Until <= mv[0].Time || mv[0].Until > mv[0].Time+int64(10*time.Second) {
		t.Errorf("moves %+v: want one, known to all within its spread", mv)
	}
}

// A black-hole crash does not answer: the client times out, where a
// crashed node that refuses answers at once.
func TestBlackHoleCrashTimesOut(t *testing.T) {
	c := netConfig()
	plan := faults.Plan{Events: []faults.Event{{At: 0, Kind: faults.Crash, Node: 0, BlackHole: true}}}
	var r rpcTimed
	runScripts(t, c, plan, func(env algorithm.Env) {
		env.Sleep(time.Millisecond)
		r = timed(env, func() error { _, err := env.Topology(LockKey)[0].ReadKey("x"); return err })
	})
	if r.err != algorithm.ErrServerDown || r.elapsed != c.RPCTimeout {
		t.Errorf("read of a black-holed n0: %v after %v, want ServerDown after the %v timeout", r.err, r.elapsed, c.RPCTimeout)
	}
}
