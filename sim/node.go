package sim

import (
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
)

var opNames = [...]string{"?", "write-if-absent-or-same", "read", "remove", "set-if-absent-ttl",
	"compare-and-delete", "increment", "resource-read", "resource-write", "raise-counter"}

func (o op) String() string { return opNames[o] }

// isWrite: a quarantined node refuses these.
func (o op) isWrite() bool {
	return o == opWriteIfAbsentOrSame || o == opSetIfAbsentTTL || o == opIncrement || o == opRaiseCounter
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
)

var errValues = [...]error{nil, algorithm.ErrServerDown, algorithm.ErrKeyAlreadyExists,
	algorithm.ErrKeyVersionChanged, algorithm.ErrKeyNotFound, algorithm.ErrNotOwner}

func (e errCode) err() error { return errValues[e] }

type request struct {
	op      op
	key     string
	owner   string
	expiry  int64  // original's expiry (writer's clock)
	version uint64 // remove-if-version
	ttl     int64  // node-side TTL
	atLeast uint64 // raise-counter's floor
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
	expireAt int64
	counter  uint64
	// since and writer: when (true time) and by which client the item was
	// last written; for History.LongItems (world.itemGone).
	since  int64
	writer int32
	// app marks the application's own data (Config.AppData), which the
	// lock must never destroy.
	app bool
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
	// by is the client whose request the store applies now.
	by int32
}

// goneHow is how an entry left a store.
type goneHow uint8

const (
	goneRemoved     goneHow = iota // by a remove or compare-and-delete
	goneExpired                    // its node-side TTL ran out
	goneWiped                      // its node lost its data
	goneOverwritten                // a write replaced it (the same owner's)
)

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
func (s *store) liveIndex(key string, now int64) int {
	i := s.find(key)
	if i >= 0 && s.entries[i].expired(now) {
		s.removeAt(i, goneExpired)
		return -1
	}
	return i
}

// expired reports whether e has reached its node-side TTL at node time now.
func (e *entry) expired(now int64) bool { return e.expireAt != 0 && now >= e.expireAt }

// live returns the entry under key if present and not expired at node time now.
func (s *store) live(key string, now int64) (entry, bool) {
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
	return algorithm.Item{Key: key, Owner: e.owner, Expiry: time.Duration(e.expiry), Version: e.version}
}

// apply executes one request atomically at node-local time now and writes
// its reply to rep, every field of it (rep is reused memory: see
// world.turnAround).
func (s *store) apply(r *request, now int64, rep *reply) {
	*rep = reply{}
	// liveIndex, written out: it is too big to inline (cost 97), and calling
	// it here, on every request, costs 1% of a fault-free run's instructions
	// (16.07 M -> 16.22 M). Keep the two in step.
	i := s.find(r.key)
	if i >= 0 && s.entries[i].expired(now) {
		s.removeAt(i, goneExpired)
		i = -1
	}
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
		e = s.put(i, r.key, entry{owner: r.owner, version: s.nextVersion(r.key), expireAt: now + r.ttl})
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
	case opRaiseCounter:
		if e == nil {
			e = s.put(i, r.key, entry{version: s.nextVersion(r.key)})
		}
		e.counter = max(e.counter, r.atLeast)
		rep.counter = e.counter
	default:
		panic("sim: unknown op")
	}
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
