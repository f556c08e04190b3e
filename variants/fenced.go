package variants

import (
	"slices"

	"locksim/algorithm"
)

// fenced is corrected plus fencing tokens: the protected resource remembers
// the newest token it has seen and refuses older ones, so a holder whose lock
// expired during a pause cannot write after its successor.
//
// After corrected grants the lock, it increments a counter (key+"_fence") on
// every node of the topology and takes the largest value returned by a
// majority. A bare maximum over a majority can repeat: nodes that missed
// increments lag, and a later majority of laggards can return the same
// maximum as an earlier holder. So it then "catches up" lagging repliers
// (more increments) until a majority of nodes hold at least the token; any
// later majority meets one of them, and its increment there returns more.
// Fewer than a majority of replies or of caught-up nodes: the acquire fails
// and the lock is released.
//
// Tokens are strictly increasing between successive holders as long as the
// counters survive on a majority: a node that restarts empty restarts its
// counter too (the resource then refuses the next holders until the counters
// overtake, which is unavailable but safe unless two holders draw the same
// value).
func init() {
	Register(algorithm.Variant{
		Name:    "fenced",
		Summary: "corrected + fencing tokens from a majority of per-node counters",
		New: func() algorithm.Lock {
			return fencedLock{lock: dhtLock{fix: correctedFixes, maxDepth: algorithm.OriginalMaxDepth}}
		},
		Envelope: algorithm.Envelope{
			// Fencing promises the resource, not the lock: beliefs may
			// overlap (a paused holder), the resource refuses the stale one.
			Promises: algorithm.ResourceSafety | algorithm.Liveness,
			Safety:   algorithm.Assumptions{ResourceChecksTokens: true},
			Liveness: algorithm.Assumptions{MessageLossMaxPPM: livenessLossMaxPPM},
		},
	})
}

// maxCatchUp bounds the increments spent bringing one lagging node up to the
// token; a node further behind is not counted.
const maxCatchUp = 1024

type fencedLock struct{ lock dhtLock }

func (f fencedLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	g := f.lock.Acquire(env, key)
	if !g.Granted {
		return g
	}
	token, ok := fenceToken(env, key)
	if !ok {
		f.lock.Release(env, key, g)
		return algorithm.Grant{}
	}
	g.Token, g.HasToken = token, true
	return g
}

func (f fencedLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	f.lock.Release(env, key, g)
}

// fenceToken draws a token greater than any earlier holder's.
func fenceToken(env algorithm.Env, key string) (uint64, bool) {
	fenceKey := key + "_fence"
	topology := env.Topology(key)
	majority := len(topology)/2 + 1
	type reply struct {
		server algorithm.Server
		value  uint64
	}
	var replies []reply
	var token uint64
	for _, server := range topology {
		if v, err := server.Increment(fenceKey); err == nil {
			replies = append(replies, reply{server, v})
			token = max(token, v)
		}
	}
	if len(replies) < majority {
		return 0, false
	}
	// Least-lagging first: catch up as few increments as a majority needs.
	slices.SortStableFunc(replies, func(a, b reply) int {
		switch {
		case a.value > b.value:
			return -1
		case a.value < b.value:
			return 1
		}
		return 0
	})
	confirmed := 0
	for _, r := range replies {
		if confirmed == majority {
			break
		}
		if catchUp(r.server, fenceKey, r.value, token) {
			confirmed++
		}
	}
	return token, confirmed == majority
}

// catchUp increments the counter on server until it is at least want.
func catchUp(server algorithm.Server, fenceKey string, have, want uint64) bool {
	if want-have > maxCatchUp {
		return false
	}
	for have < want {
		v, err := server.Increment(fenceKey)
		if err != nil {
			return false
		}
		have = v
	}
	return true
}
