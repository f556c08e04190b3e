package redisnode

import (
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// The redis library scripts call, and Redis's conversions between replies and
// Lua values (script_lua.c).

func (e *luaEngine) redisLib() *lua.LTable {
	L := e.L
	lib := L.NewTable()
	// A slice, not a map: the table's key order (what next() walks) must not
	// depend on Go's map iteration.
	for _, f := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{"call", func(L *lua.LState) int { return e.call(L, true) }},
		{"pcall", func(L *lua.LState) int { return e.call(L, false) }},
		{"error_reply", func(L *lua.LState) int { return e.replyTable(L, "err") }},
		{"status_reply", func(L *lua.LState) int { return e.replyTable(L, "ok") }},
		{"sha1hex", e.sha1hex},
		{"log", e.log},
		{"replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 }}, // always on since Redis 7
		{"set_repl", func(L *lua.LState) int { return 0 }},
	} {
		lib.RawSetString(f.name, L.NewFunction(f.fn))
	}
	for _, c := range []struct {
		name  string
		value int
	}{
		{"LOG_DEBUG", 0}, {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2}, {"LOG_WARNING", 3},
		{"REPL_NONE", 0}, {"REPL_AOF", 1}, {"REPL_SLAVE", 2}, {"REPL_REPLICA", 2}, {"REPL_ALL", 3},
	} {
		lib.RawSetString(c.name, lua.LNumber(c.value))
	}
	return lib
}

// call is redis.call (raise true) and redis.pcall (raise false): run one
// command on this node at the script's time, Redis's conversions both ways.
func (e *luaEngine) call(L *lua.LState, raise bool) int {
	top := L.GetTop()
	if top == 0 {
		return e.callFailed(L, raise, luaErrorText("Please specify at least one argument for this redis lib call"))
	}
	args := e.argBuf[:0]
	for i := 1; i <= top; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args = append(args, bytesOf(string(v)))
		case lua.LNumber:
			args = append(args, []byte(formatLuaNumber(float64(v))))
		default:
			return e.callFailed(L, raise, luaErrorText("Lua redis lib command arguments must be strings or integers"))
		}
	}
	e.argBuf = args[:0]
	reply := e.node.doFromScript(e.req, args, e.readOnly)
	if reply.Kind == Error {
		return e.callFailed(L, raise, luaErrorText("-"+reply.Str))
	}
	L.Push(e.toLua(reply))
	return 1
}

// callFailed raises {err=text} for redis.call and returns it for redis.pcall.
func (e *luaEngine) callFailed(L *lua.LState, raise bool, text string) int {
	t := errTable(L, text)
	if raise {
		L.Error(t, 0)
		return 0
	}
	L.Push(t)
	return 1
}

// luaErrorText is Redis's luaPushErrorBuff: "-CODE msg" keeps its code, a
// text without a leading '-' (or without a space after the code) gets "ERR".
func luaErrorText(buf string) string {
	code, msg := "ERR", buf
	if body, dashed := strings.CutPrefix(buf, "-"); dashed {
		msg = body
		if c, m, found := strings.Cut(body, " "); found {
			code, msg = c, m
		}
	}
	return code + " " + strings.Trim(msg, "\r\n")
}

func errTable(L *lua.LState, text string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(text))
	return t
}

// bytesOf views a Lua string as the []byte a command handler reads; handlers
// never write to their arguments (Do's contract), so no copy is needed. An
// empty string stays a non-nil empty slice: nil means "absent" to handlers.
func bytesOf(s string) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// toLua is Redis's reply-to-Lua conversion: integer to number, bulk to string,
// nil to false, status to {ok=...}, error to {err=...}, array to a table.
func (e *luaEngine) toLua(r Reply) lua.LValue {
	L := e.L
	switch r.Kind {
	case Integer:
		return lua.LNumber(r.Int)
	case Bulk:
		return lua.LString(r.Str)
	case Status:
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(r.Str))
		return t
	case Error:
		return errTable(L, luaErrorText("-"+r.Str))
	case Array:
		t := L.CreateTable(len(r.Array), 0)
		for i, el := range r.Array {
			t.RawSetInt(i+1, e.toLua(el))
		}
		return t
	}
	return lua.LFalse // nil bulk, nil array
}

// toReply is Redis's Lua-to-reply conversion: number to integer (truncated),
// string to bulk, true to 1, false and nil to nil, a table with a string err
// or ok field to an error or status, any other table to an array of its
// elements 1, 2, ... up to the first nil.
func (e *luaEngine) toReply(v lua.LValue, depth int) Reply {
	switch v := v.(type) {
	case lua.LString:
		return bulkReply(string(v))
	case lua.LNumber:
		return intReply(luaNumberToInt(float64(v)))
	case lua.LBool:
		if v {
			return replyOne
		}
		return replyNil
	case *lua.LTable:
		if depth >= maxReplyNesting {
			return errorReply("ERR reached lua stack limit")
		}
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			return errorReply(sanitize(string(s)))
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return statusReply(sanitize(string(s)))
		}
		var out []Reply
		for i := 1; ; i++ {
			el := v.RawGetInt(i)
			if el == lua.LNil {
				break
			}
			out = append(out, e.toReply(el, depth+1))
		}
		if out == nil {
			out = []Reply{}
		}
		return Reply{Kind: Array, Array: out}
	}
	return replyNil // nil, functions, userdata
}

// replyTable is redis.error_reply (field "err") and redis.status_reply ("ok").
func (e *luaEngine) replyTable(L *lua.LState, field string) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errTable(L, luaErrorText("wrong number or type of arguments")))
		return 1
	}
	if field == "err" {
		buf := string(s)
		if !strings.HasPrefix(buf, "-") {
			buf = "-" + buf
		}
		L.Push(errTable(L, luaErrorText(buf)))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func (e *luaEngine) sha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(errTable(L, luaErrorText("wrong number of arguments")), 0)
		return 0
	}
	L.Push(lua.LString(sha1Hex([]byte(lua.LVAsString(L.Get(1))))))
	return 1
}

// log checks its arguments as Redis does and discards the message.
func (e *luaEngine) log(L *lua.LState) int {
	if L.GetTop() < 2 {
		L.Error(errTable(L, luaErrorText("redis.log() requires two arguments or more.")), 0)
		return 0
	}
	level, ok := L.Get(1).(lua.LNumber)
	if !ok {
		L.Error(errTable(L, luaErrorText("First argument must be a number (log level).")), 0)
		return 0
	}
	if level < 0 || level > 3 {
		L.Error(errTable(L, luaErrorText("Invalid debug level.")), 0)
	}
	return 0
}
