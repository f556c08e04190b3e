// Package algorithm defines what a lock algorithm sees of the world and the
// interface every lock variant implements. It imports nothing of locksim's:
// an algorithm is written against these types only, in blocking style, the
// way the pseudo-code of spec/original.md is written.
//
// All instants are local-clock readings in nanoseconds since the scenario
// epoch, carried as time.Duration; all durations are time.Duration. Nothing
// here reads the wall clock.
//
// The DHT a lock writes to is shared with the application the lock
// protects, as in the post: in the worlds that draw it, before the run
// the application has stored its own data under the locked key itself
// ("k"), and in some also under "k_lock", the name the post's lock item
// takes (the data is written by host h0, so an owner by host name
// mistakes it for h0's lock item). A lock must never remove or overwrite
// either: any of it destroyed is a data-loss violation, and a lock whose
// item takes another name (a reserved prefix, a suffix the application
// cannot use) is not troubled by it. Timelines and leftovers never show the
// application's data as a lock item; a wait it blocks says so by name.
package algorithm

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Errors a Server call can return. They are the pseudo-code's exceptions
// plus the few the variants' primitives need.
var (
	// ErrServerDown: the node refused (crashed) or did not answer before the
	// client's timeout. The operation may or may not have been applied.
	ErrServerDown = errors.New("ServerDown")
	// ErrKeyAlreadyExists: a write-if-absent found the key held by another owner.
	ErrKeyAlreadyExists = errors.New("KeyAlreadyExists")
	// ErrKeyVersionChanged: a remove-if-version found another version (or no key).
	ErrKeyVersionChanged = errors.New("KeyVersionChanged")
	// ErrKeyNotFound: a read found no such key.
	ErrKeyNotFound = errors.New("KeyNotFound")
	// ErrNotOwner: a compare-and-delete found the key missing or owned by someone else.
	ErrNotOwner = errors.New("NotOwner")
	// ErrLeaseNotFound: the lease expired or was revoked (etcd's ErrLeaseNotFound).
	ErrLeaseNotFound = errors.New("LeaseNotFound")
)

// Item is a stored lock item as a read returns it.
type Item struct {
	Key     string
	Owner   string
	Expiry  time.Duration // instant on the writer's clock (original) or 0 when the node keeps a TTL
	Version uint64        // node-assigned; a remove must name it
	// CreateRevision is the store revision at which an etcd-style key was
	// created (CreateWithLease); 0 for the other primitives' items.
	CreateRevision uint64
}

// Server is one DHT node holding the key, as a client sees it. Every call
// blocks until the node's reply arrives or the client's RPC timeout fires.
type Server interface {
	// Name is the node's name, e.g. "n2".
	Name() string

	// WriteIfDoesNotExistsOrSameServer is the original's primitive: write
	// (owner, expiry) under key if the key is absent or already owned by owner
	// (then the expiry is overwritten); else ErrKeyAlreadyExists.
	WriteIfDoesNotExistsOrSameServer(key, owner string, expiry time.Duration) error
	// ReadKey returns the item or ErrKeyNotFound.
	ReadKey(key string) (Item, error)
	// RemoveKey deletes key if its version is still version; else ErrKeyVersionChanged.
	RemoveKey(key string, version uint64) error

	// SetIfAbsentTTL stores (owner) under key with a node-side time-to-live
	// measured on the node's own clock (Redis SET NX PX); ErrKeyAlreadyExists
	// if a live item exists. It returns the stored item.
	SetIfAbsentTTL(key, owner string, ttl time.Duration) (Item, error)
	// CompareAndDelete deletes key only if it is owned by owner; else ErrNotOwner.
	CompareAndDelete(key, owner string) error
	// Increment atomically increments the counter under key and returns the
	// new value (a source of fencing tokens).
	Increment(key string) (uint64, error)
	// RaiseCounter sets the counter under key to atLeast if it is lower,
	// leaves it alone otherwise, and returns its value: a max-register.
	// One call brings a lagging counter up to a fencing token that
	// increments one at a time could not reach within a lease.
	RaiseCounter(key string, atLeast uint64) (uint64, error)

	// ExtendIfOwner is the Redlock page's extend script: if key holds
	// owner's item, its node-side TTL restarts at ttl (PEXPIRE); else
	// ErrNotOwner. With SetIfAbsentTTL (SET NX PX) and CompareAndDelete
	// (the delete-if-value script) it is what a Redis lock is made of.
	ExtendIfOwner(key, owner string, ttl time.Duration) error

	// The etcd-style primitives, with etcd's semantics on one node, each
	// atomic. The node keeps a store revision that every creation and
	// deletion of a key of theirs increments; a wipe loses it with the data.
	//
	// LeaseGrant creates a lease that expires ttl after now on the node's
	// own clock, and returns its ID (never 0).
	LeaseGrant(ttl time.Duration) (uint64, error)
	// LeaseKeepAlive restarts the lease's TTL; ErrLeaseNotFound once it
	// expired or was revoked.
	LeaseKeepAlive(lease uint64) error
	// LeaseRevoke ends the lease and deletes the keys attached to it, as
	// its expiry does; ErrLeaseNotFound if it is gone already.
	LeaseRevoke(lease uint64) error
	// CreateWithLease is the transaction
	// If(CreateRevision(key) == 0).Then(Put(key, owner, WithLease(lease))).Else(Get(key)):
	// it returns the new item (CreateRevision set), or, with
	// ErrKeyAlreadyExists, the item already there; ErrLeaseNotFound if
	// the lease is gone.
	CreateWithLease(key, owner string, lease uint64) (Item, error)
	// FirstCreated is Get(prefix, WithFirstCreate()): the live key under
	// prefix with the lowest create revision; ErrKeyNotFound if none.
	FirstCreated(prefix string) (Item, error)
	// LastCreatedBefore is the live key under prefix with the highest
	// create revision below rev (what etcd's waitDeletes watches);
	// ErrKeyNotFound if none.
	LastCreatedBefore(prefix string, rev uint64) (Item, error)
	// Delete deletes key if it is there (etcd's Delete: no error if not).
	Delete(key string) error
}

// Env is the world an algorithm runs in: one client thread's view.
// Calls that wait (Server calls, Sleep) yield to the simulator; the others
// return at once.
type Env interface {
	// Topology is dht.GetTopologyFor(key): the nodes that hold key, in the
	// DHT's order. It may change between calls (topology faults).
	Topology(key string) []Server
	// Now is the client host's clock (offset, drift, jumps included), in
	// UTC: what time.Now is in Go, DateTime.UtcNow in .NET.
	Now() time.Duration
	// LocalNow is the same clock in the host's local time zone, what
	// DateTime.Now reads: Now plus the zone's UTC offset, which changes
	// at a daylight-saving transition. Equal to Now for a host on UTC.
	LocalNow() time.Duration
	// HostName is currentServerName: shared by every thread on the host.
	HostName() string
	// ClientName is unique per client thread, e.g. "h1/t0".
	ClientName() string
	// Sleep suspends the thread for d of local time.
	Sleep(d time.Duration)
	// Rand is this client's seeded random stream.
	Rand() *rand.Rand
	// TTL is the lock's time-to-live as deployed (the post's one minute by
	// default). Nodes quarantine restarts and checkers bound liveness by it,
	// so algorithms take it from here rather than hard-coding their own.
	TTL() time.Duration
}

// Grant is what an acquire tells its caller.
type Grant struct {
	Granted bool
	// Owner is the identity written into the lock items (host name in the
	// original, a unique token in corrected variants).
	Owner string `json:",omitempty"`
	// Token is a fencing token when HasToken; the protected resource rejects
	// tokens older than the newest it has seen.
	Token    uint64 `json:",omitempty"`
	HasToken bool   `json:",omitempty"`
	// ValidUntil, when non-zero, is the local-clock instant after which the
	// holder must stop believing it holds the lock. Zero: the holder believes
	// until it releases (the original has no notion of validity).
	ValidUntil time.Duration `json:",omitempty"`
}

// Lock is one algorithm for one client thread. A new Lock is made per client;
// it may keep state between calls.
type Lock interface {
	Acquire(env Env, key string) Grant
	Release(env Env, key string, g Grant)
}

// Variant describes a registered algorithm.
type Variant struct {
	Name    string // short, used on the command line: "original", "fenced"
	Summary string // one line: what it changes
	// New makes the Lock for one client thread.
	New func() Lock
	// Envelope is what the variant promises and what it assumes of the
	// world: the source of truth for its assumptions (help and reports
	// print Envelope.String). The simulated deployment provides what it
	// asks of the deployment: restart quarantine, a resource that checks
	// fencing tokens.
	Envelope Envelope
	// Fixes are the single fixes the variant's family knows, one per bug:
	// attribution replays a failing seed with each (and sets of them) to
	// say which bug it shows. Optional: a lock without them is attributed
	// by the faults and world fields its failures need.
	Fixes []Fix
	// WithFixes is the variant with the named lock fixes of Fixes applied
	// (those whose World is empty; the harness applies the others). Nil
	// when no fix of Fixes changes the lock.
	WithFixes func(names []string) Variant
}

// FixNames lists v's fixes by name, comma-separated ("none" without).
func (v Variant) FixNames() string {
	if len(v.Fixes) == 0 {
		return "none"
	}
	s := v.Fixes[0].Name
	for _, f := range v.Fixes[1:] {
		s += ", " + f.Name
	}
	return s
}

// Fix is one fix a variant's family knows: what it repairs, and whether
// it is a change to the lock or to the world the lock runs in.
type Fix struct {
	// Name is how attribution and the command line name it: "quorum".
	Name string
	// Bug says, in a line, the bug it removes.
	Bug string
	// World, when set, names a change to the deployment or the world
	// instead of the lock: the bug lives there, and no fix inside the
	// algorithm removes it (a topology that never moves while a lock is
	// held, nodes quarantined after a restart).
	World WorldChange
	// Within names a fix whose world this bug needs to show at all (stale
	// views need topology changes): a sweep of this bug alone leaves that
	// one out too.
	Within string
	// Broad: the fix changes much of the lock at once (another acquire
	// altogether), so it would remove most violations by itself. It is
	// tried only for a violation no narrower fix, nor all of them
	// together, removes.
	Broad bool
}

// WorldChange is a counterfactual change to the world a seed runs in,
// which the harness knows how to make.
type WorldChange string

// The world changes the harness makes. Each removes one thing from a
// seed's world or plan and keeps everything else.
const (
	PinnedTopology    WorldChange = "pinned-topology"     // no topology change
	InstantTopology   WorldChange = "instant-topology"    // topology changes reach every client at once
	QuarantinedNodes  WorldChange = "quarantined-nodes"   // a node that restarts empty refuses lock writes for one TTL
	ReservedNames     WorldChange = "reserved-names"      // the application keeps no data under a lock item's name
	UniqueVersions    WorldChange = "unique-versions"     // a node never gives a key a version it gave before
	NoWipes           WorldChange = "no-wipes"            // crashes keep the node's data
	NoCrashes         WorldChange = "no-crashes"          // no node crashes
	NoPartitions      WorldChange = "no-partitions"       // no partition
	NoClogs           WorldChange = "no-clogs"            // no node is clogged
	NoPauses          WorldChange = "no-pauses"           // no client pauses, timed or at a fault point
	NoClockErrors     WorldChange = "no-clock-errors"     // every clock reads true time: no offset, drift, jump
	NoTimeZones       WorldChange = "no-time-zones"       // every host's local time is UTC
	NoLoss            WorldChange = "no-loss"             // no message or reply is lost
	NoDuplicates      WorldChange = "no-duplicates"       // no message is delivered twice
	NoExtraLatency    WorldChange = "no-extra-latency"    // neither the plan's extra latency nor the world's slow link
	OneThreadPerHost  WorldChange = "one-thread-per-host" // every host runs one client thread
	NoApplicationData WorldChange = "no-application-data" // the application keeps no data in the DHT
	// The application's misuse of a lock run unmodified (faults.Use).
	NoLateHolders    WorldChange = "no-late-holders"    // no holder stalls past its validity before it extends or unlocks
	NoShortDeadlines WorldChange = "no-short-deadlines" // no Lock is called with a deadline shorter than a retry
	NoStrayRefresh   WorldChange = "no-stray-refresh"   // no refresher extends a lock while its holder unlocks it
)
