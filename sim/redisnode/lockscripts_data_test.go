package redisnode

// The exact script texts lock libraries send, copied byte for byte from their
// sources in the module cache (regenerate if a library version changes).

// go-redsync/redsync v4.18.1, scripts.go: text and the SHA1 the library sends.
const redsyncDeleteScript = `
	local val = redis.call("GET", KEYS[1])
	if val == ARGV[1] then
		return redis.call("DEL", KEYS[1])
	elseif val == false then
		return -1
	else
		return 0
	end
`

const redsyncDeleteScriptSHA = "e950836ed1e694540c503ef9972b8de518044d3b"

const redsyncTouchWithSetNXScript = `
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	elseif redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
		return 1
	else
		return 0
	end
`

const redsyncTouchWithSetNXScriptSHA = "b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79"

const redsyncTouchScript = `
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	else
		return 0
	end
`

const redsyncTouchScriptSHA = "d75bb8b5bd13532ddedd17762e772346e39b321e"

// bsm/redislock v0.9.4, redislock.go.
const redislockRefresh = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`

const redislockRelease = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

const redislockPTTL = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pttl", KEYS[1]) else return -3 end`

const redislockObtain = `
if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[3]) then return redis.status_reply("OK") end

local offset = tonumber(ARGV[2])
if redis.call("getrange", KEYS[1], 0, offset-1) == string.sub(ARGV[1], 1, offset) then return redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[3]) end
`
