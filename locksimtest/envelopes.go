package locksimtest

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/variants"
)

// RedlockEnvelope is what a lock over several Redis masters (redsync, a
// Redlock of your own) can promise and must assume: Redlock's own, the
// redlock variant's. For safety: clocks that run within 1% of each other
// and never step, a holder that uses the lock only within the validity its
// Lock or Extend reported, and a restarted master kept from lock writes
// for one TTL (Redlock's "delayed restarts", which the simulated
// deployment provides). For liveness besides: at most 0.5% of messages
// lost, none duplicated, at least three masters. CheckRedis states it by
// default for a world of three nodes or more.
func RedlockEnvelope() algorithm.Envelope { return variants.MustLookup("redlock").Envelope }

// OneNodeEnvelope is what a lock on one Redis node (bsm/redislock, SET NX
// PX of your own) can promise and must assume: Redlock's, without its
// fewest masters, since one node is all it has. Its clock may run up to 1%
// fast, so a validity it reports must leave that margin (Redlock's: 1% of
// the TTL plus 2 ms). CheckRedis states it by default for a world of one
// or two nodes.
func OneNodeEnvelope() algorithm.Envelope {
	e := RedlockEnvelope()
	e.Liveness.ReplicationMin = 0
	return e
}

// defaultEnvelope is what CheckRedis states for a lock that states none:
// Redlock's over three nodes or more, OneNodeEnvelope's over fewer.
func defaultEnvelope(cfg sim.Config) algorithm.Envelope {
	if cfg.Nodes >= 3 {
		return RedlockEnvelope()
	}
	return OneNodeEnvelope()
}
