package redisnode

import (
	"crypto/sha1"
	"encoding/hex"
)

// Scripting commands, after Redis 7.0's eval.c and script.c. A script runs
// inside the one Do call that started it, so it is atomic, and every command
// it calls runs at that call's now.

func cmdEval(n *Node, r request) Reply      { return n.eval(r, false, false) }
func cmdEvalSHA(n *Node, r request) Reply   { return n.eval(r, true, false) }
func cmdEvalRO(n *Node, r request) Reply    { return n.eval(r, false, true) }
func cmdEvalSHARO(n *Node, r request) Reply { return n.eval(r, true, true) }

// engine is the node's Lua state, created on first use: most nodes of a
// simulation may never see a script.
func (n *Node) engine() *luaEngine {
	if n.lua == nil {
		n.lua = newLuaEngine(n.opts.ScriptSteps)
	}
	return n.lua
}

// eval is evalGenericCommand, in Redis's order of checks: a SHA of the wrong
// length, then numkeys, then the script itself.
func (n *Node) eval(r request, bySHA, readOnly bool) Reply {
	args := r.args
	if bySHA && len(args[1]) != 40 {
		return errNoScript
	}
	numKeys, ok := parseStrictInt(args[2])
	if !ok {
		return errNotInt
	}
	if numKeys > int64(len(args)-3) {
		return errorReply("ERR Number of keys can't be greater than number of args")
	}
	if numKeys < 0 {
		return errorReply("ERR Number of keys can't be negative")
	}
	e := n.engine()
	var sha string
	var s *script
	if bySHA {
		sha = lowerHex(args[1])
		if _, loaded := n.loaded[sha]; !loaded {
			return errNoScript
		}
		s = e.compiled[sha]
	} else {
		sha = sha1Hex(args[1])
		var fail Reply
		if s, fail = e.compile(sha, args[1]); s == nil {
			return fail
		}
		n.loaded[sha] = struct{}{} // EVAL caches the script, even if it then fails
	}
	keys := args[3 : 3+numKeys]
	return e.run(n, r, sha, s, keys, args[3+numKeys:], readOnly)
}

// doFromScript runs a command for redis.call: scriptCall's checks, with the
// texts Redis uses inside scripts, then the command itself.
func (n *Node) doFromScript(r request, args [][]byte, readOnly bool) Reply {
	cmd, fail := n.find(args)
	switch fail {
	case lookupOK:
	case lookupArity:
		return errorReply("ERR Wrong number of args calling Redis command from script")
	default:
		return errorReply("ERR Unknown Redis command called from script")
	}
	if cmd.flags&flagNoScript != 0 {
		return errorReply("ERR This Redis command is not allowed from script")
	}
	if readOnly && cmd.flags&flagWrite != 0 {
		return errorReply("ERR Write commands are not allowed from read-only scripts.")
	}
	r.args = args
	return cmd.run(n, r)
}

func cmdScriptLoad(n *Node, r request) Reply {
	sha := sha1Hex(r.args[2])
	if _, fail := n.engine().compile(sha, r.args[2]); fail.Kind != 0 {
		return fail
	}
	n.loaded[sha] = struct{}{}
	return bulkReply(sha)
}

func cmdScriptExists(n *Node, r request) Reply {
	out := make([]Reply, len(r.args)-2)
	for i, a := range r.args[2:] {
		out[i] = replyZero
		if _, ok := n.loaded[lowerHex(a)]; ok {
			out[i] = replyOne
		}
	}
	return Reply{Kind: Array, Array: out}
}

// cmdScriptFlush forgets every loaded script. Compiled code stays cached: it
// is a function of the text alone, and recompiling is what the cache avoids.
func cmdScriptFlush(n *Node, r request) Reply {
	switch {
	case len(r.args) == 2:
	case len(r.args) == 3 && (equalFold(r.args[2], "sync") || equalFold(r.args[2], "async")):
	default:
		return errorReply("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
	}
	clear(n.loaded)
	return replyOK
}

func sha1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// lowerHex lower-cases a SHA1 argument: Redis's script dictionary compares
// names case-insensitively.
func lowerHex(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}
