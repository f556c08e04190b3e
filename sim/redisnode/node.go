// Package redisnode is a deterministic, simulated single Redis node with Redis 7
// semantics for string keys, expiry and Lua scripting: the store behind an
// in-memory connection that unmodified Redis clients talk RESP2 to.
//
// The node never reads the wall clock: every call is given now, the node's own
// clock reading in nanoseconds. That clock may drift and jump, even backwards,
// and expiry follows it, as a real Redis follows its host's clock. Nothing here
// starts goroutines or draws random numbers, so the same calls give the same
// replies.
//
// Node's comment lists what differs from Redis on purpose; each difference is
// explained again where it is implemented.
//
// Why one package of about 2,500 lines: it is one Redis server, and its
// files are Redis's own cut: the wire (resp.go, reply.go), a file per
// command family (cmd_*.go), and the Lua binding (lua*.go). They share the
// keyspace and its expiry, which a package boundary would have to export.
package redisnode

import (
	"slices"
	"sort"
)

// Node is one simulated Redis node's state: keyspace and script cache.
//
// Values are strings only (locks store strings); commands of other types are
// unknown commands here. Deviations from a real Redis 7.0 node, because the
// node has no notion of a connection or of background work, or because its
// Lua is gopher-lua:
//   - SELECT accepts only db 0; CLIENT GETNAME is always nil and CLIENT ID is 1.
//   - HELLO always answers NOPROTO, so clients fall back to RESP2.
//   - CLIENT SETINFO (Redis 7.2) is accepted, for clients that send it.
//   - Expired keys are removed lazily, when a command touches them, and by
//     ExpireCycle if the simulator calls it; DBSIZE counts live keys only.
//   - A script that runs past Options.ScriptSteps Lua instructions is aborted
//     with an error (Redis would run it until SCRIPT KILL); its writes stay.
//     The budget bounds time, not memory: a script that doubles a string
//     thirty times allocates a gigabyte within it, as it would in Redis.
//   - Lua's own error messages (a syntax error, indexing nil) are worded by
//     gopher-lua; the libraries coroutine, cjson, bit, cmsgpack and struct
//     are missing; numbers concatenated into strings print as Go prints them.
type Node struct {
	db          map[string]entry
	loaded      map[string]struct{} // SHA1s (lower-case hex) SCRIPT EXISTS reports
	lua         *luaEngine          // created by the first script
	unsupported map[string]struct{}
	opts        Options
}

// entry is one key's value and absolute expiry, in ms as Redis stores it.
type entry struct {
	val        string
	expireAtMs int64
	hasExpiry  bool
}

// Options tunes a Node; the zero value is Redis's behaviour with the defaults below.
type Options struct {
	// ScriptSteps bounds the Lua VM instructions one script may execute
	// (0: DefaultScriptSteps). It stands in for Redis's busy-script timeout,
	// which needs a wall clock.
	ScriptSteps int64
}

// DefaultScriptSteps is far above what a lock script needs (tens of
// instructions) and stops an endless loop within a fraction of a second.
const DefaultScriptSteps = 5_000_000

// Entry is one live key in a Keys snapshot.
type Entry struct {
	Key, Value string
	ExpireAt   int64 // the expiry as Redis stores it (ms) times 1e6, in node ns; the key lasts through that ms. 0: none
}

// New returns an empty node with default options.
func New() *Node { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty node.
func NewWithOptions(opts Options) *Node {
	if opts.ScriptSteps <= 0 {
		opts.ScriptSteps = DefaultScriptSteps
	}
	return &Node{
		db:          map[string]entry{},
		loaded:      map[string]struct{}{},
		unsupported: map[string]struct{}{},
		opts:        opts,
	}
}

// Do runs one command atomically at node time now (ns) and returns its reply.
// args[0] is the command name, in any case. Do does not keep args or write
// into them.
func (n *Node) Do(now int64, args [][]byte) Reply {
	cmd, fail := n.resolve(args)
	if cmd == nil {
		return fail
	}
	return cmd.run(n, newRequest(now, args))
}

// Restart models a restart: wipe true loses every key (no persistence), false
// keeps keys and their absolute expiry times (an RDB/AOF reload). The script
// cache is empty after either: Redis does not persist it. Lua's math.random
// starts its sequence again, as in a new Redis process.
func (n *Node) Restart(wipe bool) {
	if wipe {
		clear(n.db)
	}
	clear(n.loaded)
	if n.lua != nil {
		n.lua.rand = newRand48()
	}
}

// Unsupported lists, sorted and deduplicated, the command names (lower case)
// this node was sent that it does not simulate; each got Redis's own
// "ERR unknown command" reply. An unknown subcommand appears as
// "container|sub", e.g. "client|list".
func (n *Node) Unsupported() []string {
	names := make([]string, 0, len(n.unsupported))
	for name := range n.unsupported {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Keys is a sorted snapshot of the keys live at now with their values and
// expiry, for reports and tests. It removes nothing.
func (n *Node) Keys(now int64) []Entry {
	nowMs := floorDiv(now, 1e6)
	out := make([]Entry, 0, len(n.db))
	for k, e := range n.db {
		if e.expired(nowMs) {
			continue
		}
		en := Entry{Key: k, Value: e.val}
		if e.hasExpiry {
			en.ExpireAt = e.expireAtMs * 1e6
		}
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ExpireCycle removes every key expired at now, as Redis's active expiry
// eventually does. Without it an expired key that nothing touches stays
// stored, and comes back to life if the clock is set back before its expiry
// (as in a real Redis between two expiry cycles). Returns how many it removed.
func (n *Node) ExpireCycle(now int64) int {
	nowMs := floorDiv(now, 1e6)
	removed := 0
	for k, e := range n.db {
		if e.expired(nowMs) {
			delete(n.db, k)
			removed++
		}
	}
	return removed
}

// expired is Redis's keyIsExpired: a key expiring at X ms still exists at
// X ms and is gone from X+1 ms on (db.c: "return now > when").
func (e entry) expired(nowMs int64) bool { return e.hasExpiry && nowMs > e.expireAtMs }

// lookup returns key's live entry, deleting it first if it has expired:
// Redis's lazy expiry (expireIfNeeded), done by every command that reads a key.
func (n *Node) lookup(key []byte, nowMs int64) (entry, bool) {
	e, ok := n.db[string(key)]
	if !ok {
		return entry{}, false
	}
	if e.expired(nowMs) {
		delete(n.db, string(key))
		return entry{}, false
	}
	return e, true
}

// store sets key to e, replacing any value and expiry.
func (n *Node) store(key []byte, e entry) { n.db[string(key)] = e }

// request is one command's arguments and the node time it runs at. A script
// and every command it calls share one request time: Redis 7 freezes the time
// a script sees at its start.
type request struct {
	now   int64 // ns
	nowMs int64 // now in ms, floored, as Redis's mstime
	args  [][]byte
}

func newRequest(now int64, args [][]byte) request {
	return request{now: now, nowMs: floorDiv(now, 1e6), args: args}
}
