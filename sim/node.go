package sim

import (
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
)

// op is a request's operation: one per primitive of algorithm.Server.
type op uint8

const (
	opWriteIfAbsentOrSame op = iota + 1
	opRead
	opRemove
	opSetIfAbsentTTL
	opCompareAndDelete
	opIncrement
	opResourceRead  // not a node op: an access to the protected resource
	opResourceWrite //
	opRaiseCounter  // appended: op values are part of recorded traces
	opExtendIfOwner
	opLeaseGrant
	opLeaseKeepAlive
	opLeaseRevoke
	opCreateWithLease
	opFirstCreated
	opLastCreatedBefore
	opDelete
)

var opNames = [...]string{"?", "write-if-absent-or-same", "read", "remove", "set-if-absent-ttl",
	"compare-and-delete", "increment", "resource-read", "resource-write", "raise-counter",
	"extend-if-owner", "lease-grant", "lease-keep-alive", "lease-revoke", "create-with-lease", "first-created",
	"last-created-before", "delete"}

func (o op) String() string { return opNames[o] }

// isWrite: a quarantined node refuses these.
func (o op) isWrite() bool {
	switch o {
	case opWriteIfAbsentOrSame, opSetIfAbsentTTL, opIncrement, opRaiseCounter, opExtendIfOwner,
		opLeaseGrant, opLeaseKeepAlive, opCreateWithLease:
		return true
	}
	return false
}

// errCode carries an algorithm error through a message without an interface.
type errCode uint8

const (
	errNone errCode = iota
	errServerDown
	errKeyAlreadyExists
	errKeyVersionChanged
	errKeyNotFound
	errNotOwner
	errLeaseNotFound
)

var errValues = [...]error{nil, algorithm.ErrServerDown, algorithm.ErrKeyAlreadyExists,
	algorithm.ErrKeyVersionChanged, algorithm.ErrKeyNotFound, algorithm.ErrNotOwner, algorithm.ErrLeaseNotFound}

func (e errCode) err() error { return errValues[e] }

type request struct {
	op      op
	key     string
	owner   string
	expiry  int64  // original's expiry (writer's clock)
	version uint64 // remove-if-version
	ttl     int64  // node-side TTL
	num     uint64 // raise-counter's floor; a lease ID; a revision
}

type reply struct {
	err     errCode
	item    algorithm.Item
	counter uint64
}

// entry is a stored value. expireAt (node clock, 0 = never) implements the
// node-side TTL; an expired entry reads as absent.
type entry struct {
	owner    string
	expiry   int64
	version  uint64
	expireAt reading
	counter  uint64
	// since and writer: when (true time) and by which client the item was
	// last written; for History.LongItems (world.itemGone).
	since  int64
	writer int32
	// app marks the application's own data (Config.AppData), which the
	// lock must never destroy.
	app bool
	// createRev and lease: an etcd-style key's create revision and the
	// lease it is attached to (0: none).
	createRev, lease uint64
}

// store is a node's versioned key/value store. It is stepped by the node,
// one request at a time, so every primitive is atomic.
type store struct {
	// entries are the keys present, in no particular order. A node holds one
	// or two keys (the lock item, a fencing counter), so a linear scan is
	// cheaper than hashing every request's freshly concatenated key.
	entries []keyEntry
	// lastVersion is the node-wide version counter: versions are never reused
	// within a node (unless restartingVersions), even across wipes.
	lastVersion uint64
	// keyVersion is used instead when versions restart per key (ABA).
	restartingVersions bool
	keyVersion         map[string]uint64
	// gone, when set, hears of every entry that leaves the store, before
	// it goes, and how (goneRemoved, goneExpired, goneWiped,
	// goneOverwritten).
	gone func(e *keyEntry, how goneHow)
	// by is the client whose request the store applies now, and byAt the
	// true time that request left it.
	by   int32
	byAt int64
	// The etcd-style state: the store revision, the leases (few, so a
	// slice), and the last lease ID handed out. A wipe loses all three.
	revision  uint64
	leases    []lease
	lastLease uint64
}

// lease is an etcd-style lease: it expires at expireAt on the node's clock.
type lease struct {
	id       uint64
	ttl      int64
	expireAt reading
}

// goneHow is how an entry left a store.
type goneHow uint8

const (
	goneRemoved     goneHow = iota // by a remove or compare-and-delete
	goneExpired                    // its node-side TTL ran out
	goneWiped                      // its node lost its data
	goneOverwritten                // a write replaced it (the same owner's)
	goneAtEnd                      // the run ended with it there
)

// goneWords are History.Items' words for how a stay ended.
var goneWords = [...]string{goneRemoved: "removed", goneExpired: "expired", goneWiped: "wiped",
	goneOverwritten: "overwritten", goneAtEnd: ""}

type keyEntry struct {
	key string
	entry
}

func newStore(restartingVersions bool) *store {
	return &store{restartingVersions: restartingVersions, keyVersion: map[string]uint64{}}
}

func (s *store) nextVersion(key string) uint64 {
	if s.restartingVersions {
		s.keyVersion[key]++
		return s.keyVersion[key]
	}
	s.lastVersion++
	return s.lastVersion
}

// wipe forgets every entry (a volatile node's restart). The version counter
// survives unless versions restart anyway: it models a boot epoch.
func (s *store) wipe() {
	if s.gone != nil {
		for i := range s.entries {
			s.gone(&s.entries[i], goneWiped)
		}
	}
	clear(s.entries)
	s.entries = s.entries[:0]
	clear(s.keyVersion)
	s.revision, s.leases = 0, s.leases[:0]
}

// find returns the index of key's entry, expired or not, or -1.
func (s *store) find(key string) int {
	for i := range s.entries {
		if s.entries[i].key == key {
			return i
		}
	}
	return -1
}

// liveIndex returns the index of key's entry if present and not expired at
// node time now, or -1. An expired entry is removed.
func (s *store) liveIndex(key string, now reading) int {
	i := s.find(key)
	if i >= 0 && s.entries[i].expired(now) {
		s.removeAt(i, goneExpired)
		return -1
	}
	return i
}

// expired reports whether e has reached its node-side TTL at node time now.
func (e *entry) expired(now reading) bool { return e.expireAt != 0 && now >= e.expireAt }

// live returns the entry under key if present and not expired at node time now.
func (s *store) live(key string, now reading) (entry, bool) {
	if i := s.liveIndex(key, now); i >= 0 {
		return s.entries[i].entry, true
	}
	return entry{}, false
}

// put stores e under key: in place at index i, or as a new key if i < 0.
// It returns the stored entry.
func (s *store) put(i int, key string, e entry) *entry {
	if i < 0 {
		i = len(s.entries)
		s.entries = append(s.entries, keyEntry{key: key})
	}
	s.entries[i].entry = e
	return &s.entries[i].entry
}

// removeAt deletes the entry at index i; the last entry takes its place.
func (s *store) removeAt(i int, how goneHow) {
	if s.gone != nil {
		s.gone(&s.entries[i], how)
	}
	last := len(s.entries) - 1
	if s.restartingVersions {
		delete(s.keyVersion, s.entries[i].key)
	}
	s.entries[i] = s.entries[last]
	s.entries[last] = keyEntry{} // drop the strings
	s.entries = s.entries[:last]
}

func item(key string, e *entry) algorithm.Item {
	return algorithm.Item{Key: key, Owner: e.owner, Expiry: time.Duration(e.expiry), Version: e.version, CreateRevision: e.createRev}
}

// apply executes one request atomically at node-local time now and writes
// its reply to rep, every field of it (rep is reused memory: see
// world.turnAround).
func (s *store) apply(r *request, now reading, rep *reply) {
	*rep = reply{}
	if len(s.leases) > 0 {
		s.expireLeases(now) // a key whose lease ran out is gone for every op
	}
	i := s.liveIndex(r.key, now)
	var e *entry // the live entry under r.key; nil if none
	if i >= 0 {
		e = &s.entries[i].entry
	}
	switch r.op {
	case opWriteIfAbsentOrSame:
		if e != nil && e.owner != r.owner {
			rep.err = errKeyAlreadyExists
			return
		}
		if e != nil && e.app && s.gone != nil {
			s.gone(&s.entries[i], goneOverwritten)
		}
		e = s.put(i, r.key, entry{owner: r.owner, expiry: r.expiry, version: s.nextVersion(r.key)})
		rep.item = item(r.key, e)
	case opRead:
		if e == nil {
			rep.err = errKeyNotFound
			return
		}
		rep.item = item(r.key, e)
	case opRemove:
		if e == nil || e.version != r.version {
			rep.err = errKeyVersionChanged
			return
		}
		s.removeAt(i, goneRemoved)
	case opSetIfAbsentTTL:
		if e != nil {
			rep.err, rep.item = errKeyAlreadyExists, item(r.key, e)
			return
		}
		e = s.put(i, r.key, entry{owner: r.owner, version: s.nextVersion(r.key), expireAt: now + reading(r.ttl)})
		rep.item = item(r.key, e)
	case opCompareAndDelete:
		if e == nil || e.owner != r.owner {
			rep.err = errNotOwner
			return
		}
		s.removeAt(i, goneRemoved)
	case opIncrement:
		if e == nil {
			e = s.put(i, r.key, entry{version: s.nextVersion(r.key)})
		}
		e.counter++
		rep.counter = e.counter
	case opExtendIfOwner:
		if e == nil || e.owner != r.owner {
			rep.err = errNotOwner
			return
		}
		e.expireAt = now + reading(r.ttl)
	case opLeaseGrant, opLeaseKeepAlive, opLeaseRevoke, opCreateWithLease, opFirstCreated, opLastCreatedBefore, opDelete:
		s.applyEtcd(r, now, rep)
	case opRaiseCounter:
		if e == nil {
			e = s.put(i, r.key, entry{version: s.nextVersion(r.key)})
		}
		e.counter = max(e.counter, r.num)
		rep.counter = e.counter
	default:
		panic("sim: unknown op")
	}
}

// applyEtcd executes an etcd-style request at node time now (apply has
// ended the leases that expired by then, with their keys). A restart does
// not renew a lease, as a new etcd leader would: time a node was down
// counts against its leases.
func (s *store) applyEtcd(r *request, now reading, rep *reply) {
	switch r.op {
	case opLeaseGrant:
		s.lastLease++
		s.leases = append(s.leases, lease{id: s.lastLease, ttl: r.ttl, expireAt: now + reading(r.ttl)})
		rep.counter = s.lastLease
	case opLeaseKeepAlive:
		l := s.findLease(r.num)
		if l < 0 {
			rep.err = errLeaseNotFound
			return
		}
		s.leases[l].expireAt = now + reading(s.leases[l].ttl)
	case opLeaseRevoke:
		l := s.findLease(r.num)
		if l < 0 {
			rep.err = errLeaseNotFound
			return
		}
		s.endLease(l)
	case opCreateWithLease:
		if i := s.find(r.key); i >= 0 {
			rep.err, rep.item = errKeyAlreadyExists, item(r.key, &s.entries[i].entry)
			return
		}
		if s.findLease(r.num) < 0 {
			rep.err = errLeaseNotFound
			return
		}
		s.revision++
		e := s.put(-1, r.key, entry{owner: r.owner, version: s.nextVersion(r.key), createRev: s.revision, lease: r.num})
		rep.item = item(r.key, e)
	case opFirstCreated, opLastCreatedBefore:
		best := -1
		for i := range s.entries {
			e := &s.entries[i]
			if e.createRev == 0 || !strings.HasPrefix(e.key, r.key) || (r.op == opLastCreatedBefore && e.createRev >= r.num) {
				continue
			}
			if best < 0 || (r.op == opFirstCreated) == (e.createRev < s.entries[best].createRev) {
				best = i
			}
		}
		if best < 0 {
			rep.err = errKeyNotFound
			return
		}
		rep.item = item(s.entries[best].key, &s.entries[best].entry)
	case opDelete:
		if i := s.find(r.key); i >= 0 {
			s.revision++
			s.removeAt(i, goneRemoved)
		}
	}
}

func (s *store) findLease(id uint64) int {
	for i := range s.leases {
		if s.leases[i].id == id {
			return i
		}
	}
	return -1
}

// leaseExpiry is when lease id runs out on the node's clock, if the store
// still has it (0 is no lease).
func (s *store) leaseExpiry(id uint64) (reading, bool) {
	if id == 0 {
		return 0, false
	}
	for _, l := range s.leases {
		if l.id == id {
			return l.expireAt, true
		}
	}
	return 0, false
}

// expireLeases ends every lease whose TTL has run out by node time now.
func (s *store) expireLeases(now reading) {
	for l := 0; l < len(s.leases); {
		if now >= s.leases[l].expireAt {
			s.endLease(l)
			continue
		}
		l++
	}
}

// endLease deletes lease l's keys (each a new revision) and the lease.
func (s *store) endLease(l int) {
	id := s.leases[l].id
	for i := 0; i < len(s.entries); {
		if s.entries[i].lease == id {
			s.revision++
			s.removeAt(i, goneExpired)
			continue
		}
		i++
	}
	s.leases = append(s.leases[:l], s.leases[l+1:]...)
}

// node is one DHT node: a store plus its liveness.
type node struct {
	name    string
	store   *store
	up      bool
	crashes int // crash windows open now: the node is up only at zero
	// blackHoles counts the open crash windows whose node does not answer
	// at all; while any is, requests vanish and their clients time out.
	blackHoles int
	clogUntil  int64 // true time; deliveries wait until then
	restartAt  int64 // true time of the last restart (quarantine)
	restarted  bool
	wiped      bool // lost its data while down (cleared at restart)
	clock      clock
}
