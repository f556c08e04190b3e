package redisnode

import (
	"strings"
)

// command is one entry of Redis's command table, for what this node simulates.
type command struct {
	name  string // full lower-case name, as error texts quote it: "get", "client|setname"
	arity int    // Redis's: n means exactly n arguments, -n at least n (the name counts)
	flags cmdFlags
	run   func(n *Node, r request) Reply
	subs  map[string]*command // a container's subcommands (CLIENT, SCRIPT)
}

type cmdFlags uint8

const (
	flagWrite    cmdFlags = 1 << iota // refused in read-only scripts
	flagNoScript                      // refused inside any script
)

// commandTable maps lower-case names to commands. It is filled by init, not a
// var initialiser, because EVAL reaches the table again through redis.call.
var commandTable map[string]*command

func init() {
	commandTable = map[string]*command{}
	add := func(name string, arity int, flags cmdFlags, run func(*Node, request) Reply) {
		commandTable[name] = &command{name: name, arity: arity, flags: flags, run: run}
	}
	// Strings.
	add("get", 2, 0, cmdGet)
	add("set", -3, flagWrite, cmdSet)
	add("setnx", 3, flagWrite, cmdSetNX)
	add("setex", 4, flagWrite, cmdSetEX)
	add("psetex", 4, flagWrite, cmdPSetEX)
	add("getset", 3, flagWrite, cmdGetSet)
	add("getdel", 2, flagWrite, cmdGetDel)
	add("mget", -2, 0, cmdMGet)
	add("mset", -3, flagWrite, cmdMSet)
	add("msetnx", -3, flagWrite, cmdMSetNX)
	add("getrange", 4, 0, cmdGetRange)
	add("setrange", 4, flagWrite, cmdSetRange)
	add("strlen", 2, 0, cmdStrlen)
	add("append", 3, flagWrite, cmdAppend)
	add("incr", 2, flagWrite, cmdIncr)
	add("decr", 2, flagWrite, cmdDecr)
	add("incrby", 3, flagWrite, cmdIncrBy)
	add("decrby", 3, flagWrite, cmdDecrBy)
	// Keys and expiry.
	add("del", -2, flagWrite, cmdDel)
	add("unlink", -2, flagWrite, cmdDel)
	add("exists", -2, 0, cmdExists)
	add("expire", -3, flagWrite, cmdExpire)
	add("pexpire", -3, flagWrite, cmdPExpire)
	add("expireat", -3, flagWrite, cmdExpireAt)
	add("pexpireat", -3, flagWrite, cmdPExpireAt)
	add("persist", 2, flagWrite, cmdPersist)
	add("ttl", 2, 0, cmdTTL)
	add("pttl", 2, 0, cmdPTTL)
	add("expiretime", 2, 0, cmdExpireTime)
	add("pexpiretime", 2, 0, cmdPExpireTime)
	add("type", 2, 0, cmdType)
	add("dbsize", 1, 0, cmdDBSize)
	add("keys", 2, 0, cmdKeys)
	add("flushall", -1, flagWrite, cmdFlush)
	add("flushdb", -1, flagWrite, cmdFlush)
	// Server and connection.
	add("ping", -1, 0, cmdPing)
	add("echo", 2, 0, cmdEcho)
	add("select", 2, 0, cmdSelect)
	add("time", 1, 0, cmdTime)
	add("hello", -1, flagNoScript, cmdHello)
	add("info", -1, 0, cmdInfo)
	addContainer("client", flagNoScript, map[string]*command{
		"setname": {arity: 3, run: cmdClientSetName},
		"getname": {arity: 2, run: cmdClientGetName},
		"id":      {arity: 2, run: cmdClientID},
		"info":    {arity: 2, run: cmdClientInfo},
		"setinfo": {arity: 4, run: cmdClientSetInfo},
	})
	// Scripting.
	add("eval", -3, flagNoScript, cmdEval)
	add("evalsha", -3, flagNoScript, cmdEvalSHA)
	add("eval_ro", -3, flagNoScript, cmdEvalRO)
	add("evalsha_ro", -3, flagNoScript, cmdEvalSHARO)
	addContainer("script", flagNoScript, map[string]*command{
		"load":   {arity: 3, run: cmdScriptLoad},
		"exists": {arity: -3, run: cmdScriptExists},
		"flush":  {arity: -2, run: cmdScriptFlush},
	})
}

func addContainer(name string, flags cmdFlags, subs map[string]*command) {
	for sub, c := range subs {
		c.name = name + "|" + sub
		c.flags |= flags
	}
	commandTable[name] = &command{name: name, arity: -2, flags: flags, subs: subs}
}

// lookupFailure says why resolving a command failed; Do and redis.call word
// each failure differently.
type lookupFailure uint8

const (
	lookupOK lookupFailure = iota
	lookupEmpty
	lookupUnknown
	lookupUnknownSub
	lookupArity
)

// find resolves args to a command (a subcommand for containers) and checks
// its arity, as Redis's processCommand does.
func (n *Node) find(args [][]byte) (*command, lookupFailure) {
	if len(args) == 0 {
		return nil, lookupEmpty
	}
	cmd := lookupName(commandTable, args[0])
	if cmd == nil {
		n.unsupported[strings.ToLower(string(args[0]))] = struct{}{}
		return nil, lookupUnknown
	}
	if cmd.subs != nil && len(args) >= 2 {
		sub := lookupName(cmd.subs, args[1])
		if sub == nil {
			n.unsupported[cmd.name+"|"+strings.ToLower(string(args[1]))] = struct{}{}
			return cmd, lookupUnknownSub
		}
		cmd = sub
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || len(args) < -cmd.arity {
		return cmd, lookupArity
	}
	return cmd, lookupOK
}

// resolve is find with Redis's replies to a client for each failure.
func (n *Node) resolve(args [][]byte) (*command, Reply) {
	cmd, fail := n.find(args)
	switch fail {
	case lookupOK:
		return cmd, Reply{}
	case lookupEmpty:
		// Redis never dispatches an empty request; ParseCommand tells the caller to skip it.
		return nil, errorReply("ERR empty command")
	case lookupUnknown:
		return nil, unknownCommand(args)
	case lookupUnknownSub:
		return nil, errorReply(sanitize("ERR unknown subcommand '" + string(truncate(args[1], 128)) +
			"'. Try " + strings.ToUpper(cmd.name) + " HELP."))
	default:
		return nil, arityError(cmd.name)
	}
}

// unknownCommand is Redis 7.0's processCommand text, byte for byte: at most
// 128 bytes of quoted arguments, each followed by a space.
func unknownCommand(args [][]byte) Reply {
	var quoted strings.Builder
	for _, a := range args[1:] {
		if quoted.Len() >= 128 {
			break
		}
		quoted.WriteByte('\'')
		quoted.Write(truncate(a, 128-quoted.Len()+1))
		quoted.WriteString("' ")
	}
	return errorReply(sanitize("ERR unknown command '" + string(truncate(args[0], 128)) + "', with args beginning with: " + quoted.String()))
}

func arityError(fullname string) Reply {
	return errorReply("ERR wrong number of arguments for '" + fullname + "' command")
}

// sanitize maps CR and LF to spaces, as Redis's addReplyErrorFormat does with
// text that echoes what the client sent.
func sanitize(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// lookupName finds a command by case-insensitive name without allocating:
// the name is lower-cased on the stack. No command name is longer than buf.
func lookupName(table map[string]*command, name []byte) *command {
	var buf [16]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return table[string(buf[:len(name)])]
}

// Error texts shared by several commands (Redis's shared.* objects).
var (
	errSyntax    = errorReply("ERR syntax error")
	errNotInt    = errorReply("ERR value is not an integer or out of range")
	errOverflow  = errorReply("ERR increment or decrement would overflow")
	errNoScript  = errorReply("NOSCRIPT No matching script. Please use EVAL.")
	errStrTooBig = errorReply("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
)

func errInvalidExpire(cmd string) Reply {
	return errorReply("ERR invalid expire time in '" + cmd + "' command")
}

// equalFold compares an argument with a lower-case option name.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
