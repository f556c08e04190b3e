package redisnode

import (
	"math"
	"strconv"
)

// String commands, after Redis 7.0's t_string.c.

// setFlags are SET's options (OBJ_SET_NX and friends in t_string.c).
type setFlags uint16

const (
	setNX setFlags = 1 << iota
	setXX
	setGet
	setKeepTTL
	setEX
	setPX
	setEXAT
	setPXAT
)

// setSpec is one SET-like command after parsing: what to store and when it expires.
type setSpec struct {
	cmd      string // for "invalid expire time in '<cmd>' command"
	flags    setFlags
	key, val []byte
	expire   []byte // the EX/PX/EXAT/PXAT argument, nil if none
	okReply  Reply  // reply when stored (SETNX: 1)
	abort    Reply  // reply when NX/XX refused (SETNX: 0)
}

func cmdSet(n *Node, r request) Reply {
	spec := setSpec{cmd: "set", key: r.args[1], val: r.args[2], okReply: replyOK, abort: replyNil}
	// Redis's parseExtendedStringArgumentsOrReply: each option refuses the ones
	// it conflicts with; repeating one is allowed and the last value wins.
	args := r.args
	for j := 3; j < len(args); j++ {
		opt, f := args[j], spec.flags
		hasNext := j+1 < len(args)
		expiry := f & (setEX | setPX | setEXAT | setPXAT)
		switch {
		case equalFold(opt, "nx") && f&setXX == 0:
			spec.flags |= setNX
		case equalFold(opt, "xx") && f&setNX == 0:
			spec.flags |= setXX
		case equalFold(opt, "get"):
			spec.flags |= setGet
		case equalFold(opt, "keepttl") && expiry == 0:
			spec.flags |= setKeepTTL
		case equalFold(opt, "ex") && f&setKeepTTL == 0 && expiry&^setEX == 0 && hasNext,
			equalFold(opt, "px") && f&setKeepTTL == 0 && expiry&^setPX == 0 && hasNext,
			equalFold(opt, "exat") && f&setKeepTTL == 0 && expiry&^setEXAT == 0 && hasNext,
			equalFold(opt, "pxat") && f&setKeepTTL == 0 && expiry&^setPXAT == 0 && hasNext:
			spec.flags |= expiryFlag(opt)
			spec.expire = args[j+1]
			j++
		default:
			return errSyntax
		}
	}
	return n.set(r, spec)
}

func expiryFlag(opt []byte) setFlags {
	switch {
	case equalFold(opt, "ex"):
		return setEX
	case equalFold(opt, "px"):
		return setPX
	case equalFold(opt, "exat"):
		return setEXAT
	}
	return setPXAT
}

func cmdSetNX(n *Node, r request) Reply {
	return n.set(r, setSpec{cmd: "setnx", flags: setNX, key: r.args[1], val: r.args[2], okReply: replyOne, abort: replyZero})
}

func cmdSetEX(n *Node, r request) Reply {
	return n.set(r, setSpec{cmd: "setex", flags: setEX, key: r.args[1], val: r.args[3], expire: r.args[2], okReply: replyOK})
}

func cmdPSetEX(n *Node, r request) Reply {
	return n.set(r, setSpec{cmd: "psetex", flags: setPX, key: r.args[1], val: r.args[3], expire: r.args[2], okReply: replyOK})
}

// set is Redis's setGenericCommand.
func (n *Node) set(r request, s setSpec) Reply {
	var expireAtMs int64
	if s.expire != nil {
		ms, fail := expireMillis(r, s.expire, s.flags, s.cmd)
		if fail.Kind != 0 {
			return fail
		}
		expireAtMs = ms
	}
	old, found := n.lookup(s.key, r.nowMs)
	oldReply := replyNil
	if found {
		oldReply = bulkReply(old.val)
	}
	if (s.flags&setNX != 0 && found) || (s.flags&setXX != 0 && !found) {
		if s.flags&setGet != 0 {
			return oldReply
		}
		return s.abort
	}
	e := entry{val: string(s.val)}
	if s.flags&setKeepTTL != 0 && found {
		e.expireAtMs, e.hasExpiry = old.expireAtMs, old.hasExpiry
	}
	if s.expire != nil {
		// An expiry already in the past is stored as is (Redis 7.0 does not
		// delete here); the key is then gone at its next lookup.
		e.expireAtMs, e.hasExpiry = expireAtMs, true
	}
	n.store(s.key, e)
	if s.flags&setGet != 0 {
		return oldReply
	}
	return s.okReply
}

// expireMillis is Redis's getExpireMillisecondsOrReply: the absolute expiry in
// ms of an EX/PX/EXAT/PXAT argument, or the error reply.
func expireMillis(r request, arg []byte, flags setFlags, cmd string) (int64, Reply) {
	ms, ok := parseStrictInt(arg)
	if !ok {
		return 0, errNotInt
	}
	seconds := flags&(setEX|setEXAT) != 0
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		return 0, errInvalidExpire(cmd)
	}
	if seconds {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		ms += r.nowMs // may wrap, as in C; caught just below
	}
	if ms <= 0 {
		return 0, errInvalidExpire(cmd)
	}
	return ms, Reply{}
}

func cmdGet(n *Node, r request) Reply {
	if e, ok := n.lookup(r.args[1], r.nowMs); ok {
		return bulkReply(e.val)
	}
	return replyNil
}

func cmdGetDel(n *Node, r request) Reply {
	e, ok := n.lookup(r.args[1], r.nowMs)
	if !ok {
		return replyNil
	}
	delete(n.db, string(r.args[1]))
	return bulkReply(e.val)
}

// cmdGetSet replies the old value and stores the new one without expiry.
func cmdGetSet(n *Node, r request) Reply {
	old := cmdGet(n, r)
	n.store(r.args[1], entry{val: string(r.args[2])})
	return old
}

func cmdMGet(n *Node, r request) Reply {
	out := make([]Reply, len(r.args)-1)
	for i, k := range r.args[1:] {
		if e, ok := n.lookup(k, r.nowMs); ok {
			out[i] = bulkReply(e.val)
		} else {
			out[i] = replyNil
		}
	}
	return Reply{Kind: Array, Array: out}
}

func cmdMSet(n *Node, r request) Reply {
	if len(r.args)%2 == 0 {
		return arityError("mset")
	}
	n.msetAll(r)
	return replyOK
}

// cmdMSetNX sets all keys only if none of them exists.
func cmdMSetNX(n *Node, r request) Reply {
	if len(r.args)%2 == 0 {
		return arityError("msetnx")
	}
	for j := 1; j < len(r.args); j += 2 {
		if _, ok := n.lookup(r.args[j], r.nowMs); ok {
			return replyZero
		}
	}
	n.msetAll(r)
	return replyOne
}

// msetAll stores each key-value pair; a plain set clears any expiry.
func (n *Node) msetAll(r request) {
	for j := 1; j < len(r.args); j += 2 {
		n.store(r.args[j], entry{val: string(r.args[j+1])})
	}
}

// cmdGetRange follows getrangeCommand's index arithmetic exactly, including
// "start and end both negative and start > end gives empty".
func cmdGetRange(n *Node, r request) Reply {
	start, ok1 := parseStrictInt(r.args[2])
	if !ok1 {
		return errNotInt
	}
	end, ok2 := parseStrictInt(r.args[3])
	if !ok2 {
		return errNotInt
	}
	e, ok := n.lookup(r.args[1], r.nowMs)
	if !ok {
		return replyEmpty
	}
	size := int64(len(e.val))
	if start < 0 && end < 0 && start > end {
		return replyEmpty
	}
	if start < 0 {
		start += size
	}
	if end < 0 {
		end += size
	}
	start, end = max(start, 0), max(end, 0)
	if end >= size {
		end = size - 1
	}
	if start > end || size == 0 {
		return replyEmpty
	}
	return bulkReply(e.val[start : end+1])
}

func cmdSetRange(n *Node, r request) Reply {
	offset, ok := parseStrictInt(r.args[2])
	if !ok {
		return errNotInt
	}
	if offset < 0 {
		return errorReply("ERR offset is out of range")
	}
	value := r.args[3]
	e, found := n.lookup(r.args[1], r.nowMs)
	if len(value) == 0 {
		// Setting nothing creates nothing and reports the current length.
		return intReply(int64(len(e.val)))
	}
	// Unsigned, so offset+len cannot wrap past the check as it can in C.
	if uint64(offset)+uint64(len(value)) > protoMaxBulkLen {
		return errStrTooBig
	}
	if !found {
		e = entry{}
	}
	buf := []byte(e.val)
	if need := int(offset) + len(value); need > len(buf) {
		buf = append(buf, make([]byte, need-len(buf))...) // zero padding, as sdsgrowzero
	}
	copy(buf[offset:], value)
	e.val = string(buf)
	n.store(r.args[1], e) // keeps the expiry
	return intReply(int64(len(e.val)))
}

func cmdStrlen(n *Node, r request) Reply {
	e, _ := n.lookup(r.args[1], r.nowMs)
	return intReply(int64(len(e.val)))
}

func cmdAppend(n *Node, r request) Reply {
	e, found := n.lookup(r.args[1], r.nowMs)
	if found && uint64(len(e.val))+uint64(len(r.args[2])) > protoMaxBulkLen {
		return errStrTooBig
	}
	e.val += string(r.args[2])
	n.store(r.args[1], e) // keeps the expiry
	return intReply(int64(len(e.val)))
}

func cmdIncr(n *Node, r request) Reply { return n.incrBy(r, 1) }
func cmdDecr(n *Node, r request) Reply { return n.incrBy(r, -1) }

func cmdIncrBy(n *Node, r request) Reply {
	by, ok := parseStrictInt(r.args[2])
	if !ok {
		return errNotInt
	}
	return n.incrBy(r, by)
}

func cmdDecrBy(n *Node, r request) Reply {
	by, ok := parseStrictInt(r.args[2])
	if !ok {
		return errNotInt
	}
	if by == math.MinInt64 { // its negation overflows
		return errorReply("ERR decrement would overflow")
	}
	return n.incrBy(r, -by)
}

// incrBy is incrDecrCommand: the stored value must be a strict integer, the
// sum must not overflow, and the key keeps its expiry.
func (n *Node) incrBy(r request, by int64) Reply {
	e, found := n.lookup(r.args[1], r.nowMs)
	var cur int64
	if found {
		v, ok := parseStrictIntString(e.val)
		if !ok {
			return errNotInt
		}
		cur = v
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		return errOverflow
	}
	cur += by
	e.val = strconv.FormatInt(cur, 10)
	n.store(r.args[1], e)
	return intReply(cur)
}
