package redisnode

import (
	"strings"
	"testing"
)

// Expected replies are Redis 7.0.15's where Redis's text is reproducible (the
// SHA1s are of the script text); "≈" in a comment marks gopher-lua wording.

func TestEvalArguments(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "EVAL", "(error) ERR wrong number of arguments for 'eval' command"},
		{0, `EVAL "return 1"`, "(error) ERR wrong number of arguments for 'eval' command"},
		{0, `EVAL "return 1" x`, "(error) ERR value is not an integer or out of range"},
		{0, `EVAL "return 1" -1`, "(error) ERR Number of keys can't be negative"},
		{0, `EVAL "return 1" 2 a`, "(error) ERR Number of keys can't be greater than number of args"},
		{0, `EVAL "return {KEYS[1],ARGV[1],#KEYS,#ARGV}" 1 k a b`, "[k a 1 2]"},
		{0, `EVAL "return {#KEYS,#ARGV}" 0`, "[0 0]"},
		{0, "EVALSHA", "(error) ERR wrong number of arguments for 'evalsha' command"},
		{0, "EVALSHA abc 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
		{0, "EVALSHA abc x", "(error) NOSCRIPT No matching script. Please use EVAL."}, // length checked first
		{0, "EVALSHA 0000000000000000000000000000000000000000 x", "(error) ERR value is not an integer or out of range"},
		{0, "EVALSHA 0000000000000000000000000000000000000000 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
		{0, "EVALSHA_RO 0000000000000000000000000000000000000000 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
		// KEYS and ARGV are fresh for every run.
		{0, `EVAL "KEYS[1] = 'a'; return KEYS[1]" 0`, `"a"`},
		{0, `EVAL "return KEYS[1]" 0`, "(nil)"},
	})
}

func TestLuaToRedisConversions(t *testing.T) {
	runSteps(t, New(), []step{
		{0, `EVAL "return 1" 0`, "(integer) 1"},
		{0, `EVAL "return 3.9" 0`, "(integer) 3"},
		{0, `EVAL "return -3.9" 0`, "(integer) -3"},
		{0, `EVAL "return 1e20" 0`, "(integer) -9223372036854775808"},
		{0, `EVAL "return -1e20" 0`, "(integer) -9223372036854775808"},
		{0, `EVAL "return 0/0" 0`, "(integer) -9223372036854775808"},
		{0, `EVAL "return 'x'" 0`, `"x"`},
		{0, `EVAL "return true" 0`, "(integer) 1"},
		{0, `EVAL "return false" 0`, "(nil)"},
		{0, `EVAL "return nil" 0`, "(nil)"},
		{0, `EVAL "return" 0`, "(nil)"},
		{0, `EVAL "return {}" 0`, "[]"},
		{0, `EVAL "return {1,2,nil,3}" 0`, "[1 2]"},
		{0, `EVAL "return {1,'a',{2,false,'b'},true}" 0`, "[1 a [2 (nil) b] 1]"},
		{0, `EVAL "return {1,{err='inner'},{ok='st'},false,true}" 0`, "[1 (error) inner st (nil) 1]"},
		{0, `EVAL "return {ok='fine'}" 0`, "fine"},
		{0, `EVAL "return {err='My Error'}" 0`, "(error) My Error"},
		{0, `EVAL "return {err=1}" 0`, "[]"}, // err must be a string
		{0, `EVAL "return {ok='a\\r\\nb'}" 0`, "a  b"},
		{0, `EVAL "return function() end" 0`, "(nil)"},
		{0, `EVAL "local t = {} t[1] = 'x' t.y = 2 return t" 0`, "[x]"},
	})
}

func TestRedisToLuaConversions(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "SET k v", "OK"},
		{0, `EVAL "return type(redis.call('get','k'))" 0`, `"string"`},
		{0, `EVAL "return type(redis.call('get','nokey'))" 0`, `"boolean"`},
		{0, `EVAL "return redis.call('get','nokey') == false" 0`, "(integer) 1"},
		{0, `EVAL "return type(redis.call('exists','k'))" 0`, `"number"`},
		{0, `EVAL "return redis.call('set','k','v').ok" 0`, `"OK"`},
		{0, `EVAL "return redis.call('ping')" 0`, "PONG"},
		{0, `EVAL "return redis.pcall('incr','k').err" 0`, `"ERR value is not an integer or out of range"`},
		{0, `EVAL "return redis.call('mget','k','nokey')" 0`, "[v (nil)]"},
		{0, `EVAL "return {redis.call('set','q','1','GET')}" 0`, "[(nil)]"},
		{0, `EVAL "return redis.call('keys','*')" 0`, "[k q]"},
		// Numbers become arguments as C's %.17g writes them.
		{0, `EVAL "return redis.call('set','k',3.0)" 0`, "OK"},
		{0, "GET k", `"3"`},
		{0, `EVAL "return redis.call('set','k',0.1)" 0`, "OK"},
		{0, "GET k", `"0.10000000000000001"`},
		{0, `EVAL "return redis.call('set','k',1e20)" 0`, "OK"},
		{0, "GET k", `"1e+20"`},
		{0, `EVAL "return redis.call('set','k',-1e16)" 0`, "OK"},
		{0, "GET k", `"-10000000000000000"`},
		{0, `EVAL "return redis.call('set','k','')" 0`, "OK"},
		{0, `EVAL "return redis.call('set','k','v','px','')" 0`, "(error) ERR value is not an integer or out of range script: f483902fcdda1973ac7a0b9f8bcb9e85f87e4ac4, on @user_script:1."},
	})
}

func TestScriptErrors(t *testing.T) {
	runSteps(t, New(), []step{
		{0, `EVAL "retur 1" 0`, "(error) ERR Error compiling script (new function): user_script:1: parse error near '1'"}, // ≈
		{0, `EVAL "error('boom')" 0`, "(error) ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on @user_script:1."},
		{0, `EVAL "error({err='TBL bad'})" 0`, "(error) TBL bad script: 7c5edd20257381e632c024db55d3e993169e8a7a, on @user_script:1."},
		{0, `EVAL "local x = 1\nlocal y = 2\nerror('on three')" 0`, "(error) ERR user_script:3: on three script: eafaf11d326053a7a4e30461b100278902ac11c3, on @user_script:3."},
		{0, `EVAL "x = 1" 0`, "(error) ERR user_script:1: Attempt to modify a readonly table script: 34bce5f775de97f557a34088509c8bfe1ea17e52, on @user_script:1."},
		{0, `EVAL "KEYS = 1" 0`, "(error) ERR user_script:1: Attempt to modify a readonly table script: 8726473c55e0c4527ed3b82564a764667277b20e, on @user_script:1."},
		{0, `EVAL "redis.call = nil" 0`, "(error) ERR user_script:1: Attempt to modify a readonly table script: 2786c35ed73d3860851cf52e0b5dfbbc0bdb4803, on @user_script:1."},
		{0, `EVAL "string.x = 1" 0`, "(error) ERR user_script:1: Attempt to modify a readonly table script: c3eb0a2a15b3d4790b323c4104029c1ae425a769, on @user_script:1."},
		{0, `EVAL "rawset(_G, 'x', 1)" 0`, "(error) ERR user_script:1: Attempt to modify a readonly table script: e2c706419da183d6229a1230c3be09cc32cdeee0, on @user_script:1."},
		{0, `EVAL "setmetatable(_G, {})" 0`, "(error) ERR user_script:1: cannot change a protected metatable script: 0bf0a51fbb051c942113de0105d3f8e18cdcddb5, on @user_script:1."},
		{0, `EVAL "return y" 0`, "(error) ERR user_script:1: Script attempted to access nonexistent global variable 'y' script: e278681ed961e2fb52881313e5c90fdd93749940, on @user_script:1."},
		{0, `EVAL "print('hi')" 0`, "(error) ERR user_script:1: Script attempted to access nonexistent global variable 'print' script: f34d33bcb5c13eae1c15faddc6054e479f74aa28, on @user_script:1."},
		{0, `EVAL "return redis.call('get')" 0`, "(error) ERR Wrong number of args calling Redis command from script script: f187dee77f607f7cff00bbabc9df38507582c78d, on @user_script:1."},
		{0, `EVAL "return redis.pcall('set','k')" 0`, "(error) ERR Wrong number of args calling Redis command from script"},
		{0, `EVAL "return redis.call('nosuch','k')" 0`, "(error) ERR Unknown Redis command called from script script: 0145f09946c58744f8b6e6239ffa33b1dc68e09c, on @user_script:1."},
		{0, `EVAL "return redis.pcall('nosuch','k')" 0`, "(error) ERR Unknown Redis command called from script"},
		{0, `EVAL "return redis.call()" 0`, "(error) ERR Please specify at least one argument for this redis lib call script: 0a907e1429221a4d85516cab7fd219a82a9439d8, on @user_script:1."},
		{0, `EVAL "return redis.pcall()" 0`, "(error) ERR Please specify at least one argument for this redis lib call"},
		{0, `EVAL "return redis.call({})" 0`, "(error) ERR Lua redis lib command arguments must be strings or integers script: 80747816df1f4411f7c442b928fce6a814214839, on @user_script:1."},
		{0, `EVAL "return redis.call('set','k',true)" 0`, "(error) ERR Lua redis lib command arguments must be strings or integers script: 1bd3532411d875e74670689d964f9f48aaf13b84, on @user_script:1."},
		{0, `EVAL "return redis.call('eval','return 1','0')" 0`, "(error) ERR This Redis command is not allowed from script script: 1e5046f3a9119d3dc9cf5824428b6d9fedd305d2, on @user_script:1."},
		{0, `EVAL "return redis.call('script','flush')" 0`, "(error) ERR This Redis command is not allowed from script script: 2e2db287d48c36431e8437bb7077dc6af3cae3d6, on @user_script:1."},
		{0, `EVAL "return redis.call('client','id')" 0`, "(error) ERR This Redis command is not allowed from script script: 6b57691688c1a59f07a7665ec9d907a922123bf8, on @user_script:1."},
		{0, `EVAL "return redis.call('set','k','v','px','0')" 0`, "(error) ERR invalid expire time in 'set' command script: 7d872b7ad52d65548d011e264e01d73c5445eeef, on @user_script:1."},
		{0, "SET n x", "OK"},
		{0, `EVAL "return redis.call('incrby','n','x')" 0`, "(error) ERR value is not an integer or out of range script: 9b169ebb33965d9ae9ee1c5d14d648c7212d7028, on @user_script:1."},
		{0, `EVAL "return redis.pcall('incrby','n','x')" 0`, "(error) ERR value is not an integer or out of range"},
	})
}

func TestRedisLibHelpers(t *testing.T) {
	runSteps(t, New(), []step{
		{0, `EVAL "return redis.error_reply('Oops bad')" 0`, "(error) Oops bad"},
		{0, `EVAL "return redis.error_reply('-X bad')" 0`, "(error) X bad"},
		{0, `EVAL "return redis.error_reply('bad')" 0`, "(error) ERR bad"},
		{0, `EVAL "return redis.error_reply('')" 0`, "(error) ERR "},
		{0, `EVAL "return redis.error_reply()" 0`, "(error) ERR wrong number or type of arguments"},
		{0, `EVAL "return redis.error_reply(1)" 0`, "(error) ERR wrong number or type of arguments"},
		{0, `EVAL "return redis.status_reply('FINE')" 0`, "FINE"},
		{0, `EVAL "return redis.status_reply()" 0`, "(error) ERR wrong number or type of arguments"},
		{0, `EVAL "return redis.sha1hex('')" 0`, `"da39a3ee5e6b4b0d3255bfef95601890afd80709"`},
		{0, `EVAL "return redis.sha1hex()" 0`, "(error) ERR wrong number of arguments script: 3c7ce947ae74a835cc575b6ee87fb27503cb7ba4, on @user_script:1."},
		{0, `EVAL "redis.log(redis.LOG_WARNING, 'x'); return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}" 0`, "[0 1 2 3]"},
		{0, `EVAL "redis.log()" 0`, "(error) ERR redis.log() requires two arguments or more. script: 832b44eaff8743413d7a371df1c038871278515a, on @user_script:1."},
		{0, `EVAL "return redis.replicate_commands()" 0`, "(integer) 1"},
		{0, `EVAL "return {type(string.format), type(table.concat), type(math.floor), type(tonumber), type(unpack)}" 0`, "[function function function function function]"},
	})
}

func TestReadOnlyScripts(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "SET k 1", "OK"},
		{0, `EVAL_RO "return redis.call('get','k')" 1 k`, `"1"`},
		{0, `EVAL_RO "return redis.call('set','k','v')" 0`, "(error) ERR Write commands are not allowed from read-only scripts. script: d223ed8c7345b684e8ed044ed472601f536fa58b, on @user_script:1."},
		{0, `EVAL_RO "return redis.pcall('set','k','v')" 0`, "(error) ERR Write commands are not allowed from read-only scripts."},
		{0, `EVAL_RO "return redis.call('nosuch','k')" 0`, "(error) ERR Unknown Redis command called from script script: 0145f09946c58744f8b6e6239ffa33b1dc68e09c, on @user_script:1."},
		{0, "EVALSHA_RO d223ed8c7345b684e8ed044ed472601f536fa58b 0", "(error) ERR Write commands are not allowed from read-only scripts. script: d223ed8c7345b684e8ed044ed472601f536fa58b, on @user_script:1."},
		// The same script by EVALSHA (not _RO) may write.
		{0, "EVALSHA d223ed8c7345b684e8ed044ed472601f536fa58b 0", "OK"},
		{0, "GET k", `"v"`},
		{0, "EVAL \"#!lua flags=no-writes\nreturn redis.call('del','k')\" 0", "(error) ERR Write commands are not allowed from read-only scripts. script: fa69fe0f5bdfc114af24269cb648da870591cdf0, on @user_script:2."},
		{0, "EVAL \"#!lua\nreturn redis.call('get','k')\" 0", `"v"`},
		{0, "EVAL \"#!pascal\nreturn 1\" 0", "(error) ERR Unexpected engine in script shebang: #!pascal"},
		{0, "EVAL \"#!lua flags=fast\nreturn 1\" 0", "(error) ERR Unexpected flag in script shebang: fast"},
		{0, "EVAL \"#!lua\" 0", "(error) ERR Invalid script shebang"},
	})
}

func TestScriptCommand(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "SCRIPT", "(error) ERR wrong number of arguments for 'script' command"},
		{0, "SCRIPT LOAD", "(error) ERR wrong number of arguments for 'script|load' command"},
		{0, "SCRIPT EXISTS", "(error) ERR wrong number of arguments for 'script|exists' command"},
		{0, `SCRIPT LOAD "return 1"`, `"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"`},
		{0, `SCRIPT LOAD "retur 1"`, "(error) ERR Error compiling script (new function): user_script:1: parse error near '1'"},
		{0, "SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db x E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "[1 0 1]"},
		{0, "EVALSHA E0E1F9FABFC9D4800C877A703B823AC0578FF8DB 0", "(integer) 1"},
		{0, "SCRIPT FLUSH foo", "(error) ERR SCRIPT FLUSH only support SYNC|ASYNC option"},
		{0, "SCRIPT FLUSH async", "OK"},
		{0, "SCRIPT FLUSH", "OK"},
		{0, "SCRIPT foo", "(error) ERR unknown subcommand 'foo'. Try SCRIPT HELP."},
		{0, "SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "[0]"},
		{0, "EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
		// A script that fails at run time is still cached by EVAL.
		{0, `EVAL "error('x')" 0`, "(error) ERR user_script:1: x script: 9851144f39f03a0d597a980c5aa79c80cb696891, on @user_script:1."},
		{0, "SCRIPT EXISTS 9851144f39f03a0d597a980c5aa79c80cb696891", "[1]"},
	})
}

func TestScriptTimeIsFrozen(t *testing.T) {
	// Everything a script does happens at the now of the Do that runs it.
	runSteps(t, New(), []step{
		{1000 * ms, `EVAL "redis.call('set', KEYS[1], 'v', 'PX', 10); return {redis.call('pttl', KEYS[1]), redis.call('time')}" 1 k`, "[10 [1 0]]"},
		{1010 * ms, `EVAL "return redis.call('pttl', KEYS[1])" 1 k`, "(integer) 0"},
		{1011 * ms, `EVAL "return redis.call('get', KEYS[1])" 1 k`, "(nil)"},
	})
}

func TestMathRandomIsRedisRand48(t *testing.T) {
	// Redis 7.0 runs one rand48 sequence per process from a fixed state and no
	// longer reseeds it per script; these are real Redis 7.0.15's first numbers.
	n := New()
	const s = `EVAL "return {math.random(1000), math.random(1000), math.random(5, 10)}" 0`
	runSteps(t, n, []step{
		{0, s, "[397 841 7]"},
		{0, s, "[447 319 10]"},
		{0, `EVAL "math.randomseed(42); return {math.random(1000), math.random(1000)}" 0`, "[745 343]"},
		{0, `EVAL "return math.random(0)" 0`, "(error) ERR user_script:1: bad argument #1 to random (interval is empty) script: 008bcb60f86ee36d26c67b641b46674578d9cba0, on @user_script:1."},
	})
	n.Restart(false)
	runSteps(t, n, []step{{0, s, "[397 841 7]"}})
}

func TestRunawayScriptsAreBounded(t *testing.T) {
	n := NewWithOptions(Options{ScriptSteps: 200_000})
	for _, tc := range []struct{ script, want string }{
		{"while true do end", "Lua instruction budget"},
		{"while true do pcall(function() while true do end end) end", "Lua instruction budget"},
		{"local function f() return f() + 1 end return f()", "stack overflow"},
		{"local function f() local r = f() return r end return f()", "stack overflow"},
		// Growing varargs fill the data stack; gopher-lua then fails with a Go
		// panic of its own ("index out of range"), which PCall turns into an error.
		{"local function f(...) return f(1, 2, 3, 4, 5, 6, 7, 8, ...) end return f()", "ERR "},
	} {
		r := n.Do(0, [][]byte{[]byte("EVAL"), []byte(tc.script), []byte("0")})
		if r.Kind != Error || !strings.Contains(r.Str, tc.want) {
			t.Errorf("%s: got %s, want an error containing %q", tc.script, r, tc.want)
		}
	}
	// The node still works afterwards.
	runSteps(t, n, []step{{0, `EVAL "return redis.call('ping')" 0`, "PONG"}})
}

func TestScriptsCannotLeaveStateBehind(t *testing.T) {
	runSteps(t, New(), []step{
		{0, `EVAL "local t = getmetatable(_G); return type(t)" 0`, `"boolean"`},
		{0, `EVAL "math.random = nil" 0`, "(error) ERR user_script:1: Attempt to modify a readonly table script: d9b92ca5dd59604e95d9aa086206364417903caf, on @user_script:1."},
		{0, `EVAL "return type(math.random)" 0`, `"function"`},
		{0, `EVAL "return type(loadstring('return 1'))" 0`, `"function"`},
		{0, `EVAL "return loadstring('return KEYS[1]')()" 1 zz`, `"zz"`},
		{0, `EVAL "return loadstring('x = 1')()" 0`, "(error) ERR <string>:1: Attempt to modify a readonly table script: afbff2ee5a9bb020f9918fdbbf2a281dc3fec921, on @<string>:1."},
	})
}
