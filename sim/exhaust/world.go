package exhaust

import (
	"time"

	"github.com/locksim/locksim/sim"
)

// The world an exploration runs in: small enough that every schedule of
// a few faults can be run.

// SmallWorld is the world Exhaust explores by default: nodes nodes, all
// holding the key, one client thread on each of clients hosts going for
// acquisitions grants each; a TTL of 2 s, holds of 500 ms (a waiter tries
// again during a hold), 200 ms between attempts, 1–5 ms latency without a
// tail, 20 s of virtual time (ten TTLs: room for the liveness bound).
func SmallWorld(nodes, clients, acquisitions int) sim.Config {
	c := sim.DefaultConfig()
	c.Nodes, c.Replication, c.Hosts, c.ThreadsPerHost = nodes, nodes, clients, 1
	c.Acquisitions = acquisitions
	c.TTL, c.Duration = 2*time.Second, 20*time.Second
	c.HoldMin, c.HoldMax = 500*time.Millisecond, 500*time.Millisecond
	c.ThinkMin, c.ThinkMax = 200*time.Millisecond, 200*time.Millisecond
	c.LatencyTail = 0
	return c
}
