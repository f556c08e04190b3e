// Package etcdnode is a deterministic, simulated single etcd member with
// etcd's v3 API semantics (v3.6, checked against its source and a real
// 3.4.23): keys with revisions and history, range, put, delete and txn,
// leases, and watches. It is the store behind a shim that etcd's own Go
// client (clientv3, concurrency.Mutex) talks to; the shim converts etcd's pb
// messages field by field into this package's mirror of them (types.go).
//
// The member never reads the wall clock: every call is given now, the
// member's own clock reading in nanoseconds, which may drift. Nothing here
// starts goroutines or draws random numbers, and nothing iterates a map where
// the order shows: the same calls give the same results, byte for byte.
//
// A single member: what it acknowledges it has applied and fsynced, so a
// restart keeps every key, lease and the revision, and no acknowledged write
// is ever lost. Wipe models losing the disk, which is outside that promise.
//
// Deliberate differences from a real member, each explained where it is
// implemented:
//   - Expired leases are revoked only when the caller runs ExpireDue (every
//     ExpiryCheckPeriod of member time, as etcd's lessor loop); several leases
//     due together are revoked in (expiry, ID) order, etcd's order is its
//     goroutines'.
//   - A watch's catch-up events come with its Created response, not within
//     etcd's 100 ms resync loop; progress notifications and fragmenting are
//     not sent (recorded by Unsupported when asked for).
//   - Nothing is compacted: the whole history stays in memory.
//   - Chosen lease IDs are the member ID's low 16 bits and a counter, not
//     etcd's clock-based ones; lease key lists and LeaseLeases ties are sorted.
//   - Lease checkpoints (off by default in etcd) and the lessor's spreading of
//     expiries after a promotion of more than 1000 leases are not modelled.
//   - RaftTerm is 2 on a fresh member, as a real one reports, and one more
//     after each restart (a guess: the restarted member wins one election).
//   - A txn that passes etcd's checks and then fails (etcd panics) is undone
//     and answered Unknown (see Member.Unsupported).
//   - Where etcd 3.4 and 3.6 differ, the member is 3.6: it refuses unknown
//     sort options and watches from a negative revision, and answers a
//     progress request only on a stream with watches.
//
// Why one package of about 1,900 lines: it is one etcd member, cut as etcd
// cuts its server: the pb mirror (types.go), the keyspace with its
// revisions (store.go, kv.go, write.go), txn (txn.go), leases (lease.go),
// watches (watch.go) and the connection a client's gRPC channel is
// (conn.go). All of them read and write the one revisioned store.
package etcdnode

import (
	"fmt"
	"slices"
	"time"
)

// Identity a real single member shows. The IDs are those of an etcd started
// with its defaults (name "default", localhost URLs).
const (
	ClusterID     uint64 = 0xcdf818194e3a8c32
	MemberID      uint64 = 0x8e9e05c52164694d
	FreshRaftTerm uint64 = 2
)

// Defaults, as etcd's with its default flags.
const (
	// ExpiryCheckPeriod is how often etcd's lessor looks for expired leases
	// (lessor.go runLoop); the simulator calls ExpireDue this often.
	ExpiryCheckPeriod = 500 * time.Millisecond
	// DefaultElectionTimeout is etcd's --election-timeout (1000 ms); a
	// restarted member's leases are extended by it (lessor.Promote).
	DefaultElectionTimeout = time.Second
	// DefaultMinLeaseTTLSeconds is ceil(1.5 × election ticks × heartbeat):
	// ceil(1.5 × 10 × 100 ms) = 2 s (server.go).
	DefaultMinLeaseTTLSeconds = 2
	// DefaultMaxTxnOps is etcd's --max-txn-ops.
	DefaultMaxTxnOps = 128
	// MaxLeaseTTLSeconds is lease.MaxLeaseTTL: a longer grant is refused.
	MaxLeaseTTLSeconds = 9_000_000_000
	// revokeLimitPerCheck is leaseRevokeRate/2: leases revoked per check.
	revokeLimitPerCheck = 500
)

// Options tunes a Member; the zero value is etcd's defaults.
type Options struct {
	// MinLeaseTTLSeconds raises shorter grants (0: DefaultMinLeaseTTLSeconds).
	MinLeaseTTLSeconds int64
	// ElectionTimeout, in member time, extends every lease at a restart
	// (0: DefaultElectionTimeout).
	ElectionTimeout time.Duration
	// MaxTxnOps bounds the compares and the ops of each txn branch
	// (0: DefaultMaxTxnOps).
	MaxTxnOps int
}

// Member is one simulated etcd member's state. It is not safe for
// concurrent use: the simulator calls it from one goroutine, in order.
type Member struct {
	opts        Options
	store       *store
	leases      map[int64]*lease // looked up; listed sorted
	leaseSeq    uint64           // the last counter used for a chosen lease ID
	raftTerm    uint64
	watch       watchState
	waiting     []waitingKeepAlive // keep-alives of expired leases, answered at revocation
	outbox      []Delivery
	unsupported map[string]struct{}
}

// Delivery is a message the member sends on a stream by itself, not as the
// answer to a call: a watch response caused by a write, or the answer to a
// keep-alive that waited for its lease's revocation.
//
// Deliveries are kept in the order the member made them, which is the order
// to put them on the wire: write after write, and for each write the watch
// responses in (stream, watch ID) order; after a revocation's watch
// responses come the keep-alive answers that waited for it, in the order the
// keep-alives arrived.
type Delivery struct {
	Stream    uint64
	Watch     *WatchResponse          // set for a watch response
	KeepAlive *LeaseKeepAliveResponse // set for a keep-alive answer
}

// New returns a fresh member: empty, at revision 1. It panics on a negative
// option, a bug in the caller.
func New(opts Options) *Member {
	if opts.MinLeaseTTLSeconds < 0 || opts.ElectionTimeout < 0 || opts.MaxTxnOps < 0 {
		panic(fmt.Sprintf("etcdnode: negative option in %+v", opts))
	}
	if opts.MinLeaseTTLSeconds == 0 {
		opts.MinLeaseTTLSeconds = DefaultMinLeaseTTLSeconds
	}
	if opts.ElectionTimeout == 0 {
		opts.ElectionTimeout = DefaultElectionTimeout
	}
	if opts.MaxTxnOps == 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	m := &Member{opts: opts, unsupported: map[string]struct{}{}}
	m.reset()
	return m
}

// reset empties the member, keeping the lease ID counter and what Unsupported
// recorded.
func (m *Member) reset() {
	m.store = newStore()
	m.leases = map[int64]*lease{}
	m.raftTerm = FreshRaftTerm
	m.dropConnections()
}

// dropConnections forgets everything tied to a client connection.
func (m *Member) dropConnections() {
	m.watch = newWatchState()
	m.waiting = nil
	m.outbox = nil
}

// Restart models a crash and restart: keys, leases and the revision stay
// (etcd fsyncs before it acknowledges), every connection dies (watches and
// waiting keep-alives are dropped, and so are deliveries not yet taken), and
// the new leader's lessor extends every lease to now + ElectionTimeout + TTL
// (lessor.Promote → Lease.refresh; remaining TTLs are never checkpointed
// with etcd's defaults, so the full TTL counts).
func (m *Member) Restart(now int64) {
	m.dropConnections()
	m.raftTerm++
	for _, l := range m.leases {
		l.expiry = expiryAt(now, l.ttlSeconds, m.opts.ElectionTimeout) // order does not matter
	}
}

// Wipe models a restart with an empty disk (amnesia): no keys, no leases,
// revision 1, as a fresh member. The lease ID counter goes on, so IDs chosen
// before and after a wipe never collide in a report.
func (m *Member) Wipe(now int64) { m.reset() }

// Revision is the store's current revision.
func (m *Member) Revision() int64 { return m.store.rev }

// TakeDeliveries returns the deliveries made since the last call, in order,
// and forgets them.
func (m *Member) TakeDeliveries() []Delivery {
	out := m.outbox
	m.outbox = nil
	return out
}

// Unsupported lists, sorted, the options and situations the member was asked
// for but does not simulate, so a caller can report them:
//   - "watch progress_notify", "watch fragment": never sent.
//   - "txn failed after its checks": etcd panics (a put with IgnoreValue or
//     IgnoreLease on a key an earlier "\x00"-ended delete of the same txn
//     removed); the member rolls the txn back and answers Unknown.
func (m *Member) Unsupported() []string {
	names := make([]string, 0, len(m.unsupported))
	for name := range m.unsupported {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func (m *Member) note(name string) { m.unsupported[name] = struct{}{} }

// header is the full header the gRPC layer fills in (v3rpc header.fill).
func (m *Member) header(rev int64) *ResponseHeader {
	return &ResponseHeader{ClusterId: ClusterID, MemberId: MemberID, Revision: rev, RaftTerm: m.raftTerm}
}

// fill completes a header that holds only a revision, as header.fill does.
func (m *Member) fill(h *ResponseHeader) *ResponseHeader {
	rev := h.Revision
	if rev == 0 {
		rev = m.store.rev
	}
	return m.header(rev)
}
