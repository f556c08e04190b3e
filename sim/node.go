package sim

import (
	"time"

	"locksim/algorithm"
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
)

var opNames = [...]string{"?", "write-if-absent-or-same", "read", "remove", "set-if-absent-ttl",
	"compare-and-delete", "increment", "resource-read", "resource-write"}

func (o op) String() string { return opNames[o] }

// isWrite: a quarantined node refuses these.
func (o op) isWrite() bool {
	return o == opWriteIfAbsentOrSame || o == opSetIfAbsentTTL || o == opIncrement
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
}

// store is a node's versioned key/value store. It is stepped by the node,
// one request at a time, so every primitive is atomic.
type store struct {
	entries map[string]entry
	// lastVersion is the node-wide version counter: versions are never reused
	// within a node (unless restartingVersions), even across wipes.
	lastVersion uint64
	// keyVersion is used instead when versions restart per key (ABA).
	restartingVersions bool
	keyVersion         map[string]uint64
}

func newStore(restartingVersions bool) *store {
	return &store{entries: map[string]entry{}, restartingVersions: restartingVersions, keyVersion: map[string]uint64{}}
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
	clear(s.entries)
	clear(s.keyVersion)
}

// live returns the entry under key if present and not expired at node time now.
func (s *store) live(key string, now int64) (entry, bool) {
	e, ok := s.entries[key]
	if !ok {
		return entry{}, false
	}
	if e.expireAt != 0 && now >= e.expireAt {
		delete(s.entries, key)
		if s.restartingVersions {
			delete(s.keyVersion, key)
		}
		return entry{}, false
	}
	return e, true
}

func (s *store) remove(key string) {
	delete(s.entries, key)
	if s.restartingVersions {
		delete(s.keyVersion, key)
	}
}

func item(key string, e entry) algorithm.Item {
	return algorithm.Item{Key: key, Owner: e.owner, Expiry: time.Duration(e.expiry), Version: e.version}
}

// apply executes one request atomically at node-local time now.
func (s *store) apply(r *request, now int64) reply {
	e, ok := s.live(r.key, now)
	switch r.op {
	case opWriteIfAbsentOrSame:
		if ok && e.owner != r.owner {
			return reply{err: errKeyAlreadyExists}
		}
		e = entry{owner: r.owner, expiry: r.expiry, version: s.nextVersion(r.key)}
		s.entries[r.key] = e
		return reply{item: item(r.key, e)}
	case opRead:
		if !ok {
			return reply{err: errKeyNotFound}
		}
		return reply{item: item(r.key, e)}
	case opRemove:
		if !ok || e.version != r.version {
			return reply{err: errKeyVersionChanged}
		}
		s.remove(r.key)
		return reply{}
	case opSetIfAbsentTTL:
		if ok {
			return reply{err: errKeyAlreadyExists, item: item(r.key, e)}
		}
		e = entry{owner: r.owner, version: s.nextVersion(r.key), expireAt: now + r.ttl}
		s.entries[r.key] = e
		return reply{item: item(r.key, e)}
	case opCompareAndDelete:
		if !ok || e.owner != r.owner {
			return reply{err: errNotOwner}
		}
		s.remove(r.key)
		return reply{}
	case opIncrement:
		e.counter++
		if !ok {
			e.version = s.nextVersion(r.key)
		}
		s.entries[r.key] = e
		return reply{counter: e.counter}
	}
	panic("sim: unknown op")
}

// node is one DHT node: a store plus its liveness.
type node struct {
	name      string
	store     *store
	up        bool
	crashes   int   // crash windows open now: the node is up only at zero
	clogUntil int64 // true time; deliveries wait until then
	restartAt int64 // true time of the last restart (quarantine)
	restarted bool
	clock     clock
}
