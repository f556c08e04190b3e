package redisnode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// The Lua side of scripting: one lua.LState per node, reused by every script,
// set up as Redis 7.0.15 sets up its own: a read-only global table holding an
// allow-list of the base library plus string, table and math, KEYS, ARGV and
// the redis library. Scripts are compiled once per node and cached by SHA1.

// Sizes of the LState: a runaway script hits these, or the step budget, and
// fails with an error instead of eating the simulator's memory.
const (
	luaCallStackSize    = 200       // Lua frames: Redis's Lua allows ~200 nested C calls (LUAI_MAXCCALLS)
	luaRegistrySize     = 1024      // data-stack slots to start with
	luaRegistryMaxSize  = 16 * 1024 // and at most: deep recursion fails with "registry overflow"
	luaRegistryGrowStep = 256
	maxReplyNesting     = 1000 // table depth converted to a reply: a table containing itself must stop
	scriptSource        = "user_script"
)

// luaEngine is a node's Lua interpreter and compiled scripts.
type luaEngine struct {
	L        *lua.LState
	globals  *lua.LTable // what scripts see through their read-only _G
	readonly map[*lua.LTable]struct{}
	compiled map[string]*script // by SHA1 (lower-case hex); kept across restarts: it is a pure function of the text
	budget   *stepBudget
	rand     rand48
	handler  *lua.LFunction
	argBuf   [][]byte

	// The script running now (redis.call is not re-entrant: EVAL is refused inside scripts).
	node     *Node
	req      request
	sha      string
	readOnly bool
}

// script is a compiled script: its main function and shebang flags.
type script struct {
	fn       *lua.LFunction
	noWrites bool // "#!lua flags=no-writes"
}

func newLuaEngine(steps int64) *luaEngine {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    luaCallStackSize,
		RegistrySize:     luaRegistrySize,
		RegistryMaxSize:  luaRegistryMaxSize,
		RegistryGrowStep: luaRegistryGrowStep,
	})
	e := &luaEngine{
		L:        L,
		readonly: map[*lua.LTable]struct{}{},
		compiled: map[string]*script{},
		budget:   newStepBudget(steps),
		rand:     newRand48(),
	}
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e.buildGlobals()
	e.handler = L.NewFunction(e.errorHandler)
	// The budget is checked before every VM instruction (gopher-lua's
	// context-aware main loop); it counts instructions, it never reads a clock.
	L.SetContext(e.budget)
	return e
}

// allowedBuiltins are the base-library globals Redis 7.0.15 keeps (its
// lua_builtins_allow_list) that gopher-lua has. print, dofile, loadfile,
// getfenv and setfenv are absent there too; coroutine, bit, cjson, cmsgpack
// and struct are Redis libraries this node does not provide.
var allowedBuiltins = []string{
	"assert", "error", "getmetatable", "ipairs", "load", "loadstring", "next", "pairs", "pcall",
	"rawequal", "rawget", "select", "setmetatable", "tonumber", "tostring", "type", "unpack",
	"xpcall", "_VERSION",
}

func (e *luaEngine) buildGlobals() {
	L := e.L
	real := L.G.Global
	e.globals = L.NewTable()
	for _, name := range allowedBuiltins {
		e.globals.RawSetString(name, real.RawGetString(name))
	}
	e.globals.RawSetString("rawset", L.NewFunction(e.rawset))
	e.globals.RawSetString("tostring", L.NewFunction(luaToString(real.RawGetString("tostring"))))
	// gopher-lua's collectgarbage runs Go's GC: far too slow to let a script call.
	e.globals.RawSetString("collectgarbage", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))

	math := real.RawGetString(lua.MathLibName).(*lua.LTable)
	// gopher-lua's math.random uses Go's global generator; Redis's is its own
	// rand48, one sequence per process from its fixed initial state (7.0 no
	// longer reseeds it per script).
	math.RawSetString("random", L.NewFunction(e.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(e.mathRandomSeed))
	for _, lib := range []string{lua.StringLibName, lua.TabLibName, lua.MathLibName} {
		e.globals.RawSetString(lib, e.readonlyView(real.RawGetString(lib).(*lua.LTable)))
	}
	e.globals.RawSetString("redis", e.readonlyView(e.redisLib()))

	// A missing global is an error, as Redis's globals protection makes it.
	missing := L.NewTable()
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.Get(2).String())
		return 0
	}))
	L.SetMetatable(e.globals, missing)
	env := e.readonlyView(e.globals)
	e.globals.RawSetString("_G", env)
	// Functions compiled from now on (scripts, and loadstring inside them) see env.
	L.Env = env
	// Nothing reaches the real globals any more; drop what could touch the host anyway.
	for _, name := range []string{"print", "dofile", "loadfile", "_printregs", "module", "require", "getfenv", "setfenv"} {
		real.RawSetString(name, lua.LNil)
	}
}

// readonlyView is an empty table reading through to t and refusing writes
// with Redis's "Attempt to modify a readonly table"; its metatable is locked.
func (e *luaEngine) readonlyView(t *lua.LTable) *lua.LTable {
	L := e.L
	view, mt := L.NewTable(), L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(view, mt)
	e.readonly[view] = struct{}{}
	return view
}

// luaToString is Lua's tostring with Lua 5.1's number format, C's "%.14g"
// (gopher-lua prints Go's shortest form). Concatenation still uses gopher-lua's.
func luaToString(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if f, ok := L.Get(1).(lua.LNumber); ok {
			L.Push(lua.LString(formatCNumber(float64(f), 14)))
			return 1
		}
		L.Push(orig)
		L.Push(L.CheckAny(1))
		L.Call(1, 1)
		return 1
	}
}

// rawset is Lua's, but it too refuses the read-only tables.
func (e *luaEngine) rawset(L *lua.LState) int {
	t := L.CheckTable(1)
	if _, ro := e.readonly[t]; ro {
		L.RaiseError("Attempt to modify a readonly table")
	}
	L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
	L.SetTop(1)
	return 1
}

// compile returns the cached script for sha, compiling body on first sight.
// The error is Redis's reply for a script that does not compile.
func (e *luaEngine) compile(sha string, body []byte) (*script, Reply) {
	if s, ok := e.compiled[sha]; ok {
		return s, Reply{}
	}
	noWrites, skip, fail := parseShebang(body)
	if fail.Kind != 0 {
		return nil, fail
	}
	chunk, err := parse.Parse(strings.NewReader(string(body[skip:])), scriptSource)
	if err != nil {
		return nil, compileError(err)
	}
	proto, err := lua.Compile(chunk, scriptSource)
	if err != nil {
		return nil, compileError(err)
	}
	// The main chunk is a vararg function; gopher-lua would build Lua 5.0's
	// "arg" table for it on every call, though no local can name it there.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	s := &script{fn: e.L.NewFunctionFromProto(proto), noWrites: noWrites}
	e.compiled[sha] = s
	return s, Reply{}
}

// compileError words gopher-lua's parse errors like Lua 5.1's ("user_script:1:
// ... near '...'"); the message itself is gopher-lua's, so it may differ.
func compileError(err error) Reply {
	msg := err.Error()
	var pe *parse.Error
	if errors.As(err, &pe) {
		msg = fmt.Sprintf("%s:%d: %s near '%s'", scriptSource, pe.Pos.Line, pe.Message, pe.Token)
	}
	return errorReply(sanitize("ERR Error compiling script (new function): " + strings.TrimSpace(msg)))
}

// parseShebang is Redis 7.0's evalExtractShebangFlags: "#!lua [flags=a,b]" on
// the first line. skip is the shebang's length: Lua compiles from its newline
// on, so line numbers stay right.
func parseShebang(body []byte) (noWrites bool, skip int, fail Reply) {
	if !strings.HasPrefix(string(body), "#!") {
		return false, 0, Reply{}
	}
	end := strings.IndexByte(string(body), '\n')
	if end < 0 {
		return false, 0, errorReply("ERR Invalid script shebang")
	}
	parts, ok := splitArgs(body[:end])
	if !ok || len(parts) == 0 {
		return false, 0, errorReply("ERR Invalid engine in script shebang")
	}
	if string(parts[0]) != "#!lua" {
		return false, 0, errorReply(sanitize("ERR Unexpected engine in script shebang: " + string(parts[0])))
	}
	for _, p := range parts[1:] {
		flags, found := strings.CutPrefix(string(p), "flags=")
		if !found {
			return false, 0, errorReply(sanitize("ERR Unknown lua shebang option: " + string(p)))
		}
		for _, f := range strings.Split(flags, ",") {
			switch f {
			case "no-writes":
				noWrites = true
			case "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys":
			default:
				return false, 0, errorReply(sanitize("ERR Unexpected flag in script shebang: " + f))
			}
		}
	}
	return noWrites, end, Reply{}
}

// run executes a compiled script at the request's time and converts what it
// returns (or raises) into a reply.
func (e *luaEngine) run(n *Node, r request, sha string, s *script, keys, argv [][]byte, readOnly bool) Reply {
	L := e.L
	e.node, e.req, e.sha, e.readOnly = n, r, sha, readOnly || s.noWrites
	defer func() { e.node, e.req.args = nil, nil }()
	e.budget.reset()
	e.globals.RawSetString("KEYS", stringTable(L, keys))
	e.globals.RawSetString("ARGV", stringTable(L, argv))
	base := L.GetTop()
	L.Push(s.fn)
	if err := L.PCall(0, 1, e.handler); err != nil {
		L.SetTop(base)
		return e.raisedError(err)
	}
	ret := L.Get(-1)
	L.SetTop(base)
	return e.toReply(ret, 0)
}

func stringTable(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
}

// errorHandler is Redis's __redis__err__handler: whatever was raised becomes a
// table {err=..., source=..., line=...}, the line being the innermost Lua
// frame's (the script line that called redis.call, for a failed call).
func (e *luaEngine) errorHandler(L *lua.LState) int {
	raised := L.Get(1)
	t, ok := raised.(*lua.LTable)
	if !ok {
		t = L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString("ERR "+raised.String()))
	}
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.What != "G" && dbg.CurrentLine > 0 {
			t.RawSetString("source", lua.LString("@"+dbg.Source))
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
			break
		}
	}
	L.Push(t)
	return 1
}

// raisedError is Redis's reply for a script that raised: the error text, then
// " script: <sha>, on @user_script:<line>." when the line is known. An error
// the handler could not decorate (the call stack was full) comes as a string.
func (e *luaEngine) raisedError(err error) Reply {
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) {
		return errorReply(sanitize("ERR " + err.Error()))
	}
	t, ok := apiErr.Object.(*lua.LTable)
	if !ok {
		return errorReply(sanitize("ERR " + apiErr.Object.String()))
	}
	// A raised table without err crashes Redis 7.0.15; say so instead.
	msg := "ERR script raised an error table without an 'err' field"
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		msg = string(s)
	}
	src, okSrc := t.RawGetString("source").(lua.LString)
	line, okLine := t.RawGetString("line").(lua.LNumber)
	if okSrc && okLine {
		msg += " script: " + e.sha + ", on " + string(src) + ":" + strconv.Itoa(int(line)) + "."
	}
	return errorReply(sanitize(strings.TrimPrefix(msg, "-")))
}
