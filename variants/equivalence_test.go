package variants

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/algorithm/algotest"
)

// A dhtLock with no fix makes the same calls as algorithm.Original, in the
// same order, with the same outcome: so each fix-* variant differs from the
// original by its one fix only.
func TestDHTLockWithoutFixesIsTheOriginal(t *testing.T) {
	bare := dhtLock{ttl: algorithm.OriginalTTL, maxDepth: algorithm.OriginalMaxDepth}
	for seed := range uint64(2000) {
		orig, origGrants := randomRun(seed, algorithm.Original{})
		got, gotGrants := randomRun(seed, bare)
		if !slices.Equal(orig, got) || !slices.Equal(origGrants, gotGrants) {
			t.Fatalf("seed %d differs:\noriginal %v %v\ndhtLock  %v %v", seed, origGrants, orig, gotGrants, got)
		}
	}
}

// randomRun sets up a random world (items of other hosts and of this host,
// expired or live, down nodes, lost replies, clock offsets), has two threads
// of one host and one of another acquire and release, and returns the call
// log and the grants.
func randomRun(seed uint64, lock algorithm.Lock) ([]string, []string) {
	r := rand.New(rand.NewPCG(seed, 1))
	w := algotest.NewWorld(1 + r.IntN(5))
	w.Clock = 10 * time.Minute
	w.CallCost = time.Duration(r.IntN(3)) * time.Second
	owners := []string{"h1", "h2", "h9"}
	for _, n := range w.Nodes {
		if r.IntN(2) == 0 {
			n.Put("k_lock", owners[r.IntN(3)], w.Clock+time.Duration(r.IntN(240)-120)*time.Second)
		}
		n.Down = r.IntN(5) == 0
		n.LoseReplies = r.IntN(4) / 3 * (1 + r.IntN(3))
	}
	envs := []*algotest.Env{w.NewEnv("h1", "h1/t0", 1), w.NewEnv("h1", "h1/t1", 2), w.NewEnv("h2", "h2/t0", 3)}
	for _, e := range envs {
		e.Offset = time.Duration(r.IntN(5)-2) * time.Minute
	}
	var grants []string
	for range 6 {
		e := envs[r.IntN(len(envs))]
		g := lock.Acquire(e, "k")
		grants = append(grants, fmt.Sprintf("%s:%+v", e.Client, g))
		if g.Granted && r.IntN(2) == 0 {
			lock.Release(e, "k", g)
		}
		w.Clock += time.Duration(r.IntN(90)) * time.Second
	}
	return w.Log, grants
}
