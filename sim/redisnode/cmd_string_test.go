package redisnode

import "testing"

// Expected replies are Redis 7.0.15's, taken from redis-cli sessions.

func TestSetOptions(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "SET", "(error) ERR wrong number of arguments for 'set' command"},
		{0, "SET k", "(error) ERR wrong number of arguments for 'set' command"},
		{0, "SET k v XX NX", "(error) ERR syntax error"},
		{0, "SET k v NX XX", "(error) ERR syntax error"},
		{0, "SET k v PX 10 EX 10", "(error) ERR syntax error"},
		{0, "SET k v KEEPTTL PX 10", "(error) ERR syntax error"},
		{0, "SET k v PX 10 KEEPTTL", "(error) ERR syntax error"},
		{0, "SET k v PXAT 10 EXAT 10", "(error) ERR syntax error"},
		{0, "SET k v PX", "(error) ERR syntax error"},
		{0, "SET k v foo", "(error) ERR syntax error"},
		{0, "SET k v PX 0", "(error) ERR invalid expire time in 'set' command"},
		{0, "SET k v PX -1", "(error) ERR invalid expire time in 'set' command"},
		{0, "SET k v EX abc", "(error) ERR value is not an integer or out of range"},
		{0, "SET k v EX 01", "(error) ERR value is not an integer or out of range"},
		{5 * ms, "SET k v PX 9223372036854775807", "(error) ERR invalid expire time in 'set' command"},
		{1000 * ms, "SET k v EX 9223372036854775", "(error) ERR invalid expire time in 'set' command"},
		{0, "SET k v PXAT 0", "(error) ERR invalid expire time in 'set' command"},
		{0, "GET k", "(nil)"},
		// Repeating an option is allowed; the last value wins.
		{0, "SET k v PX 10 PX 20 NX NX", "OK"},
		{0, "PTTL k", "(integer) 20"},
		{0, "SET k v2 NX", "(nil)"},
		{0, "SET k v2 XX KEEPTTL", "OK"},
		{0, "PTTL k", "(integer) 20"},
		{0, "SET k v3", "OK"},
		{0, "PTTL k", "(integer) -1"},
		{0, "SET missing v XX", "(nil)"},
		{0, "SET k v4 GET", `"v3"`},
		{0, "SET new v GET", "(nil)"},
		{0, "SET k v5 NX GET", `"v4"`}, // GET with NX replies the old value and sets nothing
		{0, "GET k", `"v4"`},
		{0, "SET other v NX GET", "(nil)"},
		{0, "GET other", `"v"`},
		{0, "SET k v EX 2", "OK"},
		{0, "PTTL k", "(integer) 2000"},
		{0, "SET k v EXAT 5", "OK"},
		{0, "PEXPIRETIME k", "(integer) 5000"},
		{0, "SET k v PXAT 7", "OK"},
		{0, "PEXPIRETIME k", "(integer) 7"},
		// An absolute time in the past is accepted and the key is simply gone.
		{10 * ms, "SET k v PXAT 1", "OK"},
		{10 * ms, "GET k", "(nil)"},
		{0, "set K V px 10 get", "(nil)"},
		{0, "GET K", `"V"`},
	})
}

func TestSetVariants(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "SETNX k", "(error) ERR wrong number of arguments for 'setnx' command"},
		{0, "SETNX k 1", "(integer) 1"},
		{0, "SETNX k 2", "(integer) 0"},
		{0, "GET k", `"1"`},
		{0, "SETEX k 0 v", "(error) ERR invalid expire time in 'setex' command"},
		{0, "SETEX k -5 v", "(error) ERR invalid expire time in 'setex' command"},
		{0, "SETEX k abc v", "(error) ERR value is not an integer or out of range"},
		{0, "SETEX k 10 v", "OK"},
		{0, "PTTL k", "(integer) 10000"},
		{0, "PSETEX k 0 v", "(error) ERR invalid expire time in 'psetex' command"},
		{0, "PSETEX k 100 v", "OK"},
		{0, "PTTL k", "(integer) 100"},
		{0, "GETSET k", "(error) ERR wrong number of arguments for 'getset' command"},
		{0, "GETSET k w", `"v"`},
		{0, "PTTL k", "(integer) -1"}, // GETSET clears the expiry
		{0, "GETSET fresh w", "(nil)"},
		{0, "GETDEL", "(error) ERR wrong number of arguments for 'getdel' command"},
		{0, "GETDEL k", `"w"`},
		{0, "GETDEL k", "(nil)"},
		{0, "GET", "(error) ERR wrong number of arguments for 'get' command"},
		{0, "GET k v", "(error) ERR wrong number of arguments for 'get' command"},
	})
}

func TestMultiKey(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "MSET", "(error) ERR wrong number of arguments for 'mset' command"},
		{0, "MSET a", "(error) ERR wrong number of arguments for 'mset' command"},
		{0, "MSET a 1 b", "(error) ERR wrong number of arguments for 'mset' command"},
		{0, "MSETNX a 1 b", "(error) ERR wrong number of arguments for 'msetnx' command"},
		{0, "MSETNX a 1 b 2", "(integer) 1"},
		{0, "MSETNX a 1 c 3", "(integer) 0"},
		{0, "MGET", "(error) ERR wrong number of arguments for 'mget' command"},
		{0, "MGET a b c", "[1 2 (nil)]"},
		{0, "PEXPIRE a 100", "(integer) 1"},
		{0, "MSET a x c y", "OK"},
		{0, "PTTL a", "(integer) -1"}, // MSET clears expiries
		{0, "MGET a c", "[x y]"},
		{0, "PEXPIRE b 10", "(integer) 1"},
		{20 * ms, "MSETNX b 9", "(integer) 1"}, // b had expired
	})
}

func TestGetRangeSetRangeStrlenAppend(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "GETRANGE a", "(error) ERR wrong number of arguments for 'getrange' command"},
		{0, "GETRANGE a 0 x", "(error) ERR value is not an integer or out of range"},
		{0, "GETRANGE a x 0", "(error) ERR value is not an integer or out of range"},
		{0, "GETRANGE missing 0 -1", `""`},
		{0, `SET s "Hello World"`, "OK"},
		{0, "GETRANGE s 0 4", `"Hello"`},
		{0, "GETRANGE s -3 -1", `"rld"`},
		{0, "GETRANGE s 0 -100", `"H"`},
		{0, "GETRANGE s 5 2", `""`},
		{0, "GETRANGE s -100 -50", `"H"`},
		{0, "GETRANGE s -1 -5", `""`},
		{0, "GETRANGE s 100 200", `""`},
		{0, "GETRANGE s 6 1000", `"World"`},
		{0, "GETRANGE s -9223372036854775808 9223372036854775807", `"Hello World"`},
		{0, "SETRANGE s -1 x", "(error) ERR offset is out of range"},
		{0, "SETRANGE s x ab", "(error) ERR value is not an integer or out of range"},
		{0, "SETRANGE s 536870912 x", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)"},
		{0, "SETRANGE s 9223372036854775807 x", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)"},
		{0, `SETRANGE s 536870911 ""`, "(integer) 11"},
		{0, `SETRANGE s2 5 ""`, "(integer) 0"},
		{0, "EXISTS s2", "(integer) 0"},
		{0, "SETRANGE s2 3 ab", "(integer) 5"},
		{0, "GET s2", `"\x00\x00\x00ab"`},
		{0, "SETRANGE s 6 Redis", "(integer) 11"},
		{0, "GET s", `"Hello Redis"`},
		{0, "STRLEN", "(error) ERR wrong number of arguments for 'strlen' command"},
		{0, "STRLEN s", "(integer) 11"},
		{0, "STRLEN nope", "(integer) 0"},
		{0, "APPEND s !", "(integer) 12"},
		{0, "APPEND newk x", "(integer) 1"},
		{0, "PEXPIRE newk 100", "(integer) 1"},
		{0, "APPEND newk y", "(integer) 2"},
		{0, "PTTL newk", "(integer) 100"}, // APPEND keeps the expiry
		{0, "SETRANGE newk 0 z", "(integer) 2"},
		{0, "PTTL newk", "(integer) 100"}, // and so does SETRANGE
	})
}

func TestIncrDecr(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "INCR", "(error) ERR wrong number of arguments for 'incr' command"},
		{0, "INCR n", "(integer) 1"},
		{0, "INCRBY n 41", "(integer) 42"},
		{0, "DECR n", "(integer) 41"},
		{0, "DECRBY n 50", "(integer) -9"},
		{0, "INCRBY n abc", "(error) ERR value is not an integer or out of range"},
		{0, "INCRBY n +1", "(error) ERR value is not an integer or out of range"},
		{0, "SET n 9223372036854775807", "OK"},
		{0, "INCR n", "(error) ERR increment or decrement would overflow"},
		{0, "SET n -9223372036854775808", "OK"},
		{0, "DECR n", "(error) ERR increment or decrement would overflow"},
		{0, "SET n 5", "OK"},
		{0, "DECRBY n -9223372036854775808", "(error) ERR decrement would overflow"},
		{0, "PEXPIRE n 100", "(integer) 1"},
		{0, "INCR n", "(integer) 6"},
		{0, "PTTL n", "(integer) 100"}, // INCR keeps the expiry
		// Stored values are parsed as strictly as arguments.
		{0, `SET n " 1"`, "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
		{0, "SET n 01", "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
		{0, "SET n 1.0", "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
		{0, "SET n -0", "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
		{0, "SET n +1", "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
		{0, `SET n ""`, "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
		{0, "SET n 123456789012345678901", "OK"},
		{0, "INCR n", "(error) ERR value is not an integer or out of range"},
	})
}

func TestParseStrictInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"00", 0, false}, {"01", 0, false},
		{"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false},
		{"18446744073709551616", 0, false}, {"000000000000000000001", 0, false},
	} {
		got, ok := parseStrictIntString(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStrictInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
