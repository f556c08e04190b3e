package redisnode

import (
	"math"
	"strconv"
)

// Server and connection commands. The node has no notion of a connection, so
// per-connection state (client name, selected db, protocol) is not kept.

func cmdPing(n *Node, r request) Reply {
	switch len(r.args) {
	case 1:
		return statusReply("PONG")
	case 2:
		return bulkReply(string(r.args[1]))
	}
	return arityError("ping")
}

func cmdEcho(n *Node, r request) Reply { return bulkReply(string(r.args[1])) }

// cmdSelect accepts db 0 only: a node without connections cannot keep the
// selected db per client, and lock clients never leave db 0. Other indexes get
// the reply Redis gives for one past its 16 databases — good enough.
func cmdSelect(n *Node, r request) Reply {
	id, ok := parseStrictInt(r.args[1])
	if !ok {
		return errNotInt
	}
	if id < math.MinInt32 || id > math.MaxInt32 {
		return errorReply("ERR value is out of range, value must between -2147483648 and 2147483647")
	}
	if id != 0 {
		return errorReply("ERR DB index is out of range")
	}
	return replyOK
}

// cmdTime is the node clock, as [seconds, microseconds].
func cmdTime(n *Node, r request) Reply {
	sec := floorDiv(r.now, 1e9)
	usec := (r.now - sec*1e9) / 1e3
	return Reply{Kind: Array, Array: []Reply{
		bulkReply(strconv.FormatInt(sec, 10)),
		bulkReply(strconv.FormatInt(usec, 10)),
	}}
}

// cmdHello answers every HELLO as Redis does an unsupported protocol version,
// so go-redis and redigo fall back to RESP2 without HELLO's per-connection state.
func cmdHello(n *Node, r request) Reply {
	return errorReply("NOPROTO unsupported protocol version")
}

func cmdInfo(n *Node, r request) Reply {
	return bulkReply("# Server\r\nredis_version:7.0.15\r\n")
}

// cmdClientSetName validates the name as Redis does and then forgets it.
func cmdClientSetName(n *Node, r request) Reply {
	if !printableNoSpace(r.args[2]) {
		return errorReply("ERR Client names cannot contain spaces, newlines or special characters.")
	}
	return replyOK
}

// cmdClientGetName is always nil: names are not kept (no connections here).
func cmdClientGetName(n *Node, r request) Reply { return replyNil }

// cmdClientID is 1 for everyone: there is no connection to number.
func cmdClientID(n *Node, r request) Reply { return replyOne }

func cmdClientInfo(n *Node, r request) Reply {
	return bulkReply("id=1 addr=127.0.0.1:0 laddr=127.0.0.1:6379 fd=0 name= db=0 resp=2 cmd=client|info\n")
}

// cmdClientSetInfo is Redis 7.2's CLIENT SETINFO, which go-redis sends on
// connect: accepted and forgotten.
func cmdClientSetInfo(n *Node, r request) Reply {
	attr := r.args[2]
	if !equalFold(attr, "lib-name") && !equalFold(attr, "lib-ver") {
		return errorReply(sanitize("ERR Unrecognized option '" + string(attr) + "'"))
	}
	if !printableNoSpace(r.args[3]) {
		return errorReply(sanitize("ERR " + string(attr) + " cannot contain spaces, newlines or special characters."))
	}
	return replyOK
}

// printableNoSpace is Redis's validateClientAttr: bytes '!' to '~' only.
func printableNoSpace(b []byte) bool {
	for _, c := range b {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}
