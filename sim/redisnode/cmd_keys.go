package redisnode

import (
	"math"
	"slices"
)

// Key-space and expiry commands, after Redis 7.0's db.c and expire.c.

// cmdDel serves DEL and UNLINK: they differ only in when Redis frees memory.
func cmdDel(n *Node, r request) Reply {
	var deleted int64
	for _, k := range r.args[1:] {
		if _, ok := n.lookup(k, r.nowMs); ok {
			delete(n.db, string(k))
			deleted++
		}
	}
	return intReply(deleted)
}

// cmdExists counts a key once per time it is named.
func cmdExists(n *Node, r request) Reply {
	var count int64
	for _, k := range r.args[1:] {
		if _, ok := n.lookup(k, r.nowMs); ok {
			count++
		}
	}
	return intReply(count)
}

// expireUnit says how EXPIRE-family arguments read: seconds or ms, relative or absolute.
type expireUnit struct {
	name    string
	seconds bool
	atTime  bool // EXPIREAT/PEXPIREAT: the argument is absolute
}

func cmdExpire(n *Node, r request) Reply    { return n.expire(r, expireUnit{"expire", true, false}) }
func cmdPExpire(n *Node, r request) Reply   { return n.expire(r, expireUnit{"pexpire", false, false}) }
func cmdExpireAt(n *Node, r request) Reply  { return n.expire(r, expireUnit{"expireat", true, true}) }
func cmdPExpireAt(n *Node, r request) Reply { return n.expire(r, expireUnit{"pexpireat", false, true}) }

// expire is Redis's expireGenericCommand: options first, then the time, then
// the key; an expiry at or before now deletes the key and still replies 1.
func (n *Node) expire(r request, u expireUnit) Reply {
	var nx, xx, gt, lt bool
	for _, opt := range r.args[3:] {
		switch {
		case equalFold(opt, "nx"):
			nx = true
		case equalFold(opt, "xx"):
			xx = true
		case equalFold(opt, "gt"):
			gt = true
		case equalFold(opt, "lt"):
			lt = true
		default:
			return errorReply(sanitize("ERR Unsupported option " + string(opt)))
		}
	}
	if nx && (xx || gt || lt) {
		return errorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if gt && lt {
		return errorReply("ERR GT and LT options at the same time are not compatible")
	}
	when, ok := parseStrictInt(r.args[2])
	if !ok {
		return errNotInt
	}
	if u.seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return errInvalidExpire(u.name)
		}
		when *= 1000
	}
	base := int64(0)
	if !u.atTime {
		base = r.nowMs
	}
	if base > 0 && when > math.MaxInt64-base {
		return errInvalidExpire(u.name)
	}
	when += base
	key := r.args[1]
	e, found := n.lookup(key, r.nowMs)
	if !found {
		return replyZero
	}
	switch {
	case nx && e.hasExpiry,
		xx && !e.hasExpiry,
		gt && (!e.hasExpiry || when <= e.expireAtMs), // no expiry counts as infinite
		lt && e.hasExpiry && when >= e.expireAtMs:
		return replyZero
	}
	if when <= r.nowMs { // checkAlreadyExpired
		delete(n.db, string(key))
		return replyOne
	}
	e.expireAtMs, e.hasExpiry = when, true
	n.store(key, e)
	return replyOne
}

func cmdPersist(n *Node, r request) Reply {
	e, found := n.lookup(r.args[1], r.nowMs)
	if !found || !e.hasExpiry {
		return replyZero
	}
	e.expireAtMs, e.hasExpiry = 0, false
	n.store(r.args[1], e)
	return replyOne
}

func cmdTTL(n *Node, r request) Reply         { return n.ttl(r, false, false) }
func cmdPTTL(n *Node, r request) Reply        { return n.ttl(r, true, false) }
func cmdExpireTime(n *Node, r request) Reply  { return n.ttl(r, false, true) }
func cmdPExpireTime(n *Node, r request) Reply { return n.ttl(r, true, true) }

// ttl is ttlGenericCommand: -2 missing, -1 no expiry; seconds round to
// nearest, (ms+500)/1000, as Redis 7 does.
func (n *Node) ttl(r request, ms, absolute bool) Reply {
	e, found := n.lookup(r.args[1], r.nowMs)
	if !found {
		return intReply(-2)
	}
	if !e.hasExpiry {
		return intReply(-1)
	}
	t := e.expireAtMs
	if !absolute {
		t -= r.nowMs
	}
	t = max(t, 0)
	if !ms {
		t = (t + 500) / 1000
	}
	return intReply(t)
}

func cmdType(n *Node, r request) Reply {
	if _, ok := n.lookup(r.args[1], r.nowMs); ok {
		return statusReply("string")
	}
	return statusReply("none")
}

// cmdDBSize counts live keys. Redis counts expired keys its expiry cycle has
// not reclaimed yet, a number that depends on timing; this is the settled one.
func cmdDBSize(n *Node, r request) Reply {
	var count int64
	for _, e := range n.db {
		if !e.expired(r.nowMs) {
			count++
		}
	}
	return intReply(count)
}

// cmdKeys replies the live keys matching the pattern, sorted (Redis's order
// is its hash table's, which no simulation should depend on).
func cmdKeys(n *Node, r request) Reply {
	pattern := string(r.args[1])
	all := pattern == "*"
	var keys []string
	for k, e := range n.db {
		if !e.expired(r.nowMs) && (all || globMatch(pattern, k)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]Reply, len(keys))
	for i, k := range keys {
		out[i] = bulkReply(k)
	}
	return Reply{Kind: Array, Array: out}
}

// cmdFlush serves FLUSHALL and FLUSHDB (one db here); SYNC and ASYNC only
// differ in when memory is freed. The script cache survives, as in Redis.
func cmdFlush(n *Node, r request) Reply {
	switch {
	case len(r.args) == 1:
	case len(r.args) == 2 && (equalFold(r.args[1], "sync") || equalFold(r.args[1], "async")):
	default:
		return errSyntax
	}
	clear(n.db)
	return replyOK
}
