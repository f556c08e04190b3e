package algorithm

import (
	"errors"
	"time"
)

// Original is the blog post's lock (spec/original.md), transliterated line by
// line with its bugs kept. Each Go line quotes the pseudo-code line it
// transliterates; where the pseudo-code is undefined or ambiguous, the
// interpretation is written on the line it resolves.
//
// Its Grant carries Granted and Owner (the host name) only: no fencing token
// and no ValidUntil, because the original has no notion of either.
type Original struct {
	// TTL is how far ahead lockExpiry is set; zero means the post's one minute.
	TTL time.Duration
	// MaxDepth bounds the retries after a successful scavenge; zero means the
	// post's 3.
	MaxDepth int
	// Literal reads the pseudo-code's undefined names literally where a
	// name in scope fits: ClearLock(key) reads and removes `key` itself,
	// not key+"_lock" (the evident intent, and the default).
	Literal bool
}

// Defaults of the post.
const (
	OriginalTTL      = time.Minute // DateTime.Now.AddMinutes(1)
	OriginalMaxDepth = 3           // recursionDepth < 3
)

// ttl is the deployment's TTL (the post's one minute unless configured),
// or o.TTL when set.
func (o Original) ttl(env Env) time.Duration {
	if o.TTL == 0 {
		return env.TTL()
	}
	return o.TTL
}

func (o Original) maxDepth() int {
	if o.MaxDepth == 0 {
		return OriginalMaxDepth
	}
	return o.MaxDepth
}

// Acquire is LockKey(key, 0).
func (o Original) Acquire(env Env, key string) Grant {
	if !o.LockKey(env, key, 0) {
		return Grant{}
	}
	// Interpretation: the original returns a bare bool; the only identity it
	// knows is currentServerName, which is what its lock items hold.
	return Grant{Granted: true, Owner: env.HostName()}
}

// Release is ClearLock(key). The grant is ignored: the original's release
// knows nothing but the key and the host name.
func (o Original) Release(env Env, key string, _ Grant) {
	o.ClearLock(env, key)
}

// LockKey transliterates `def LockKey(key, recursionDepth) as bool`.
func (o Original) LockKey(env Env, key string, recursionDepth int) bool {
	topology := env.Topology(key)             // topology = dht.GetTopologyFor(key)
	successfulLocks := 0                      // successfulLocks = 0
	lockExpiry := env.LocalNow() + o.ttl(env) // lockExpiry = DateTime.Now.AddMinutes(1)  (the writer's local time, computed once)
	lockKey := key + "_lock"                  // lockKey = key+"_lock"
	for _, server := range topology {         // for server in topology:
		err := server.WriteIfDoesNotExistsOrSameServer(lockKey, env.HostName(), lockExpiry) // server.WriteIfDoesNotExistsOrSameServer(lockKey, currentServerName, lockExpiry)
		switch {
		case err == nil:
			successfulLocks++ // successfulLocks += 1
		case errors.Is(err, ErrServerDown):
			// except ServerDown: ignore error
		case errors.Is(err, ErrKeyAlreadyExists): // except KeyAlreadyExists:
			if o.ScavengeExpiredLocks(env, lockKey) { // if ScavengeExpiredLocks(lockKey):
				// Interpretation: `return LockKey(...) if recursionDepth < 3`
				// has no else branch; evident intent: recurse only below the
				// depth, otherwise fall through to `return false`.
				if recursionDepth < o.maxDepth() { // ... if recursionDepth < 3
					return o.LockKey(env, key, recursionDepth+1) // return LockKey(key, recursionDepth+1)
				}
			}
			return false // return false
		default:
			// Interpretation: any other exception is not caught by the
			// pseudo-code and would escape LockKey: the caller sees a failure.
			return false
		}
	}

	return (successfulLocks / 2) >= (len(topology) / 2) // return (successfulLocks/2) >= (topology.Count/2)  (integer division, as written)
}

// HasExpired is the post's undefined HasExpired(val): the expiry written on
// the writer's clock compared with the reader's clock, both DateTime.Now:
// local time. The two are different clocks; the post assumes "a system that
// share a clock". Local time also differs by time zone, and jumps at a
// daylight-saving transition, even where the clocks agree.
func HasExpired(env Env, val Item) bool {
	return val.Expiry < env.LocalNow()
}

// ScavengeExpiredLocks transliterates `def ScavengeExpiredLocks(key)`.
// LockKey calls it with lockKey, so here key is already the lock item's name.
func (o Original) ScavengeExpiredLocks(env Env, key string) bool {
	// Literal: the topology of the name passed in (key+"_lock"), not of the
	// locked key; the same nodes only if the DHT places both names alike.
	topology := env.Topology(key) // topology = dht.GetTopologyFor(key)
	return ScavengeOn(env, topology, key)
}

// ScavengeOn is the loop of ScavengeExpiredLocks over the given nodes:
// the post's reads the lock item's own topology; a fixed scavenge passes
// the locked key's, where LockKey wrote the items.
func ScavengeOn(env Env, topology []Server, key string) bool {
	for _, server := range topology { // for server in topology:
		// Interpretation: `lockKey` is undefined in this scope; evident intent
		// is the lock item, which is the parameter key here.
		val, err := server.ReadKey(key) // val = server.ReadKey(lockKey)
		switch {
		case errors.Is(err, ErrServerDown):
			continue // except ServerDown: ignore error
		case errors.Is(err, ErrKeyNotFound):
			// Interpretation: the pseudo-code does not say; no item on this
			// server means nothing to scavenge there.
			continue
		case err != nil:
			return false // uncaught exception: the scavenge fails
		}
		if HasExpired(env, val) { // if HasExpired(val):
			// Interpretation: `lock` is undefined; evident intent is the same
			// lock item that was just read.
			err := server.RemoveKey(key, val.Version) // server.RemoveKey(lock, val.Version)
			switch {
			case err == nil, errors.Is(err, ErrServerDown):
				// except ServerDown: ignore error
			case errors.Is(err, ErrKeyVersionChanged):
				return false // except KeyVersionChanged: return false
			default:
				return false // uncaught exception: the scavenge fails
			}
		} else { // else:
			return false // return false
		}
	}

	return true // return true
}

// ClearLock transliterates `def ClearLock(key)`.
func (o Original) ClearLock(env Env, key string) {
	// Interpretation: `lockKey` is undefined in this scope. Taken literally
	// (ReadKey(key), o.Literal) ClearLock reads the locked key itself: it
	// never clears a lock item, and removes the application's data under the
	// key when this server wrote it last. Evident intent is key+"_lock".
	lockKey := key + "_lock"
	if o.Literal {
		lockKey = key
	}
	topology := env.Topology(key)     // topology = dht.GetTopologyFor(key)
	for _, server := range topology { // for server in topology:
		val, err := server.ReadKey(lockKey) // val = server.ReadKey(lockKey)
		if err != nil {
			// except ServerDown: ignore error. Interpretation: ErrKeyNotFound
			// means nothing to clear on that server.
			continue
		}
		if val.Owner == env.HostName() { // if BelongsToCurrentServer(val):
			// Interpretation: `lock` is the lock item just read.
			_ = server.RemoveKey(lockKey, val.Version) // server.RemoveKey(lock, val.Version); except ServerDown, KeyVersionChanged: ignore error
		}
	}
}
