package realredis

// etcd: the same coordinator runs a lock built on etcd's own client
// against one simulated etcd member (sim/etcdnode). The client's gRPC
// connection is an etcdnode.Conn (etcd_conn.go); its requests, answers and
// stream messages travel the simulated network as Redis requests do
// (etcd_net.go): latency, FIFO per connection, loss, partitions, pauses,
// the member's crashes and restarts.

import (
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/etcdnode"
)

// EtcdClient is what an etcd lock's constructor is given for one simulated
// client thread: a connection to the member for a shim that makes etcd's
// own client over it (the etcdv3 module's NewClient).
type EtcdClient struct {
	// Name is the client thread's name in reports, "h0/t0".
	Name string
	// Index is the client's index, the one histories and plans use.
	Index int
	// Conn is the client's gRPC connection to the member.
	Conn etcdnode.Conn
	// TTL is the lease TTL the world is drawn for: wire the session with
	// it (concurrency.WithTTL, in whole seconds).
	TTL time.Duration
	// Rand is the client's own seeded stream, for the lock's random choices.
	Rand *rand.Rand

	closers []io.Closer
}

// CloseOnStop has c closed when the client stops, after its Locker (an
// etcd client built over Conn, whose goroutines must end with the run),
// in the reverse order of the calls.
func (c *EtcdClient) CloseOnStop(cl io.Closer) { c.closers = append(c.closers, cl) }

// EtcdDefaultConfig is the world an etcd lock is checked in by default:
// one member, three client hosts, a 10-second lease TTL, two simulated
// minutes.
func EtcdDefaultConfig() sim.Config {
	c := DefaultConfig()
	c.Nodes, c.Replication = 1, 1
	c.TTL = 10 * time.Second
	return c
}

// DefaultKeepAliveDetect is how long a client's gRPC connection takes to
// notice that its member stopped answering (a lost message, a partition,
// a member that crashed without a word): etcdctl's gRPC keep-alive, 2 s
// between pings and 6 s to wait for the answer. Until then, calls and
// streams on it wait; afterwards they fail Unavailable and the next call
// connects again.
const DefaultKeepAliveDetect = 8 * time.Second

// etcdRuns: etcd's client keeps one channel in a package variable that
// every bubble's watches use (the etcdv3 shim points it at the current
// bubble's), so etcd runs of one process go one at a time.
var etcdRuns sync.Mutex

// keepAliveDetect is the lock's KeepAliveDetect with its default (0: never).
func (l Lock) keepAliveDetect() time.Duration {
	switch {
	case l.KeepAliveDetect < 0:
		return 0
	case l.KeepAliveDetect == 0:
		return DefaultKeepAliveDetect
	}
	return l.KeepAliveDetect
}

// heldUntil is when a pause inside Lock that holds every message of the
// client (etcdPauseBefore) and covers true time t ends (t when none does).
// The coordinator's own.
func (c *client) heldUntil(t int64) int64 { return pastWindows(c.held, t) }

// etcdPauseBefore strikes a pause that waits for a message inside Lock (or,
// for before-delete, inside Unlock): the whole client process stops before
// sending it, and its other goroutines' messages and what the member sends
// it wait too (heldUntil).
func (w *world) etcdPauseBefore(cl *client, at int64, m *emsg) int64 {
	d := w.strikePause(cl, at, m.what)
	if d > 0 {
		cl.held = append(cl.held, [2]int64{at, at + d})
	}
	return at + d
}
