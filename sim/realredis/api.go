// Package realredis runs unmodified Redis lock code (redsync, redislock, a
// user's own go-redis lock) against simulated Redis nodes, deterministically.
//
// The library runs in a testing/synctest bubble with its own goroutines,
// timers and contexts, all on the bubble's fake clock. The simulator is the
// bubble's coordinator: the clients' go-redis connections are in-memory
// (conn.go) and every request they write goes to the coordinator, which
// waits for the bubble to settle (synctest.Wait), orders what arrived by a
// key that does not depend on goroutine arrival, and only then delivers,
// applies and answers it on the simulated node (sim/redisnode). Clients run
// only while the coordinator waits, so what they see at an instant is the
// same in every run: same scenario and seed, same trace hash.
//
// A run is a sim.Scenario like any other (a sim.Config world and a
// faults.Plan) and leaves a model.History the same checkers judge; what it
// cannot do to unmodified code (a host's clock is the bubble's clock) Fit
// takes out of a plan before it runs.
//
// Why one package of about 3,200 lines: Redis and etcd clients share one
// coordinator (coord.go: the bubble, the settle-and-order loop), one
// network (network.go, etcd_net.go: loss, partitions, pauses on the same
// streams as the kernel's) and one workload (workload.go). The etcd files
// (etcd*.go, about 900 lines) are the connection and the wire for etcd's
// gRPC client over those; apart, they would need the coordinator's world
// exported to them, field by field.
package realredis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// Locker is one client's lock, as the workload uses it: the user's wiring
// of a real library over the clients locksim hands it.
type Locker interface {
	// Lock acquires the lock or fails. validUntil is when the holder must
	// stop using the resource by its own clock (redsync's Mutex.Until,
	// the obtain time plus the TTL for redislock); zero means the lock
	// says nothing, and the holder uses it until it releases.
	Lock(ctx context.Context) (validUntil time.Time, err error)
	// Unlock releases the lock.
	Unlock(ctx context.Context) error
}

// Extender is a Locker that can extend a hold (redsync's Extend,
// redislock's Refresh): the workload then holds some locks for longer
// than the TTL, extending them on the way.
type Extender interface {
	Extend(ctx context.Context) (validUntil time.Time, err error)
}

// Fencer is a Locker whose holds carry a fencing token (etcd's key
// revision, a counter the lock increments in Redis). When the lock's
// envelope has the resource check tokens (Assumptions.ResourceChecksTokens)
// and the plan does not lapse it (Deployment.NoFencing), the workload
// sends each hold's token with every access to the protected resource,
// and the resource refuses an access whose token is below the newest it
// has let in: a holder that outlived its grant is turned away once its
// successor has used the resource. Such a lock promises resource safety,
// not mutual exclusion.
type Fencer interface {
	// FencingToken is the token of the hold the last successful Lock
	// gave; the workload asks for it right after Lock returns.
	FencingToken() uint64
}

// Client is what a lock's constructor is given for one simulated client
// thread.
type Client struct {
	// Name is the client thread's name in reports, "h0/t0".
	Name string
	// Index is the client's index, the one histories and plans use.
	Index int
	// Nodes holds one go-redis client per simulated Redis node, in node
	// order; they are closed when the client stops.
	Nodes []redis.UniversalClient
	// Redigo holds one redigo pool per node, in node order, for locks on
	// redigo (redsync's redis/redigo pools); closed when the client stops.
	// A lock uses Nodes or Redigo, or both: they reach the same nodes.
	Redigo []*redigo.Pool
	// TTL is the lock expiry the world is drawn for: wire the lock with it
	// (redsync.WithExpiry, redislock's ttl).
	TTL time.Duration
	// Rand is the client's own seeded stream: feed the library's random
	// choices from it (redsync.WithGenValueFunc, WithRetryDelayFunc;
	// redislock's Options.Token), or runs do not replay.
	Rand *rand.Rand
}

// Lock is a lock built on real Redis clients: what a sweep checks.
type Lock struct {
	// Name and Summary name it in reports and repro files.
	Name    string
	Summary string
	// New builds one client's Locker; it runs inside the simulation.
	New func(c *Client) Locker
	// NewEtcd, instead of New, builds one client's Locker on etcd's own
	// client over one simulated etcd member (sim/etcdnode); the world has
	// one node, the member. A Locker that is an io.Closer is closed when
	// its client stops, and then what was given to EtcdClient.CloseOnStop
	// (close the etcd session and client there: their goroutines must end
	// with the run).
	NewEtcd func(c *EtcdClient) Locker
	// KeepAliveDetect is, for an etcd lock, how long a gRPC connection
	// whose messages are lost takes to fail (0: DefaultKeepAliveDetect;
	// negative: never, as a client without gRPC keep-alive, whose calls
	// wait until their context ends).
	KeepAliveDetect time.Duration
	// Envelope is what the lock promises and assumes of the world, as for
	// any variant.
	Envelope algorithm.Envelope
	// Retry is what Lock promises about trying again before it reports
	// failure (zero: nothing, one try): a Lock that gives up sooner while
	// the lock is free is a finding (Retry).
	Retry Retry
	// Options, when set, adjusts the go-redis options of every client
	// (timeouts, pool size, retries) to match the deployment. Determinism
	// needs Dialer and MinRetryBackoff as locksim sets them: they are set
	// again after Options runs.
	Options func(*redis.Options)
}

// Variant is the lock as the engine sees a variant: a name and an
// envelope. It has no algorithm.Lock: Runner runs it.
func (l Lock) Variant() algorithm.Variant {
	return algorithm.Variant{Name: l.Name, Summary: l.Summary, Envelope: l.Envelope}
}

// DefaultConfig is the world a Redis lock is checked in by default: three
// Redis nodes (every lock over them uses them all), three client hosts, an
// 8-second expiry (redsync's default), go-redis's own 3-second read
// timeout, two simulated minutes.
func DefaultConfig() sim.Config {
	c := sim.DefaultConfig()
	c.Nodes, c.Replication, c.Hosts, c.ThreadsPerHost = 3, 3, 3, 1
	c.Placement = sim.PlacementFirst
	c.TTL = 8 * time.Second
	c.Duration = 2 * time.Minute
	c.RPCTimeout = 3 * time.Second
	c.HoldMin, c.HoldMax = 100*time.Millisecond, 2*time.Second
	return c
}

// Fit returns plan without what this mode cannot do to unmodified code:
// a host's clock is the bubble's clock, so host clock offsets, drifts,
// jumps and time zones go; every lock sees all its nodes, so topology
// changes go; a TCP stream neither duplicates nor reorders, so duplication
// goes (loss breaks the connection instead: conn.go). Node clocks, loss,
// replies lost after apply, crashes with and without data, partitions,
// clogs, pauses and threads stay.
func Fit(plan faults.Plan) faults.Plan {
	p := plan
	p.Network.DuplicatePPM = 0
	p.Zones = nil
	p.Clocks = nil
	for _, c := range plan.Clocks {
		if c.Kind == faults.NodeProcess {
			p.Clocks = append(p.Clocks, c)
		}
	}
	p.Events = nil
	for _, e := range plan.Events {
		switch {
		case e.Kind == faults.Topology:
		case e.Kind == faults.ClockJump && e.Target != faults.NodeProcess:
		default:
			p.Events = append(p.Events, e)
		}
	}
	return p
}

// Runner runs a Redis lock's seeds for the engine (seedrun.Target.Runner),
// each in a synctest bubble of T.
type Runner struct {
	T    *testing.T
	Lock Lock
}

// Run runs one seed.
func (r Runner) Run(sc sim.Scenario) (sim.Result, error) {
	res, err := RunTest(r.T, Scenario{Config: sc.Config, Lock: r.Lock, Seed: sc.Seed, Plan: sc.Plan, Trace: sc.Trace})
	return res.Result, err
}

// Name names this way of running a seed in repro files.
func (Runner) Name() string { return "realredis" }

// Fit is the package's Fit.
func (Runner) Fit(p faults.Plan) faults.Plan { return Fit(p) }
