package redisnode

import "testing"

func TestDelExistsType(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "DEL", "(error) ERR wrong number of arguments for 'del' command"},
		{0, "EXISTS", "(error) ERR wrong number of arguments for 'exists' command"},
		{0, "MSET a 1 b 2 c 3", "OK"},
		{0, "EXISTS a a nope", "(integer) 2"}, // repeats count
		{0, "DEL a b a", "(integer) 2"},
		{0, "UNLINK c c", "(integer) 1"},
		{0, "SET e v PX 5", "OK"},
		{10 * ms, "DEL e", "(integer) 0"}, // expired keys are not counted as deleted
		{0, "SET s v", "OK"},
		{0, "TYPE", "(error) ERR wrong number of arguments for 'type' command"},
		{0, "TYPE s", "string"},
		{0, "TYPE nope", "none"},
		{0, "DBSIZE x", "(error) ERR wrong number of arguments for 'dbsize' command"},
		{0, "DBSIZE", "(integer) 1"},
	})
}

func TestExpireFamily(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "EXPIRE k", "(error) ERR wrong number of arguments for 'expire' command"},
		{0, "EXPIRE k abc", "(error) ERR value is not an integer or out of range"},
		{0, "EXPIRE k abc foo", "(error) ERR Unsupported option foo"}, // options are checked first
		{0, "EXPIRE k 100 NX XX", "(error) ERR NX and XX, GT or LT options at the same time are not compatible"},
		{0, "EXPIRE k 100 nx gt", "(error) ERR NX and XX, GT or LT options at the same time are not compatible"},
		{0, "EXPIRE k 100 GT LT", "(error) ERR GT and LT options at the same time are not compatible"},
		{0, "EXPIRE k 9223372036854775807", "(error) ERR invalid expire time in 'expire' command"},
		{0, "EXPIRE k -9223372036854775808", "(error) ERR invalid expire time in 'expire' command"},
		{5 * ms, "PEXPIRE k 9223372036854775807", "(error) ERR invalid expire time in 'pexpire' command"},
		{0, "EXPIREAT k 9223372036854775807", "(error) ERR invalid expire time in 'expireat' command"},
		{0, "EXPIRE missing 100", "(integer) 0"},
		{0, "SET k v", "OK"},
		{0, "PEXPIREAT k 9223372036854775807", "(integer) 1"},
		{0, "PERSIST k", "(integer) 1"},
		{0, "EXPIRE k 100 XX", "(integer) 0"}, // no expiry yet
		{0, "EXPIRE k 100 GT", "(integer) 0"}, // no expiry counts as infinite
		{0, "EXPIRE k 100 LT", "(integer) 1"},
		{0, "EXPIRE k 100 NX", "(integer) 0"},
		{0, "EXPIRE k 200 GT", "(integer) 1"},
		{0, "TTL k", "(integer) 200"},
		{0, "EXPIRE k 300 LT", "(integer) 0"},
		{0, "EXPIRE k 200 GT", "(integer) 0"}, // equal is not greater
		{0, "PEXPIRE k 1500 XX", "(integer) 1"},
		{0, "PEXPIRETIME k", "(integer) 1500"},
		{0, "EXPIRETIME k", "(integer) 2"}, // (1500+500)/1000
		{0, "PEXPIREAT k 2000", "(integer) 1"},
		{0, "EXPIREAT k 3", "(integer) 1"},
		{0, "PEXPIRETIME k", "(integer) 3000"},
		// An expiry at or before now deletes the key and still replies 1.
		{50 * ms, "PEXPIREAT k 50", "(integer) 1"},
		{50 * ms, "EXISTS k", "(integer) 0"},
		{0, "SET k v", "OK"},
		{0, "EXPIRE k -1", "(integer) 1"},
		{0, "GET k", "(nil)"},
		{0, "SET k v", "OK"},
		{0, "PEXPIRE k 0", "(integer) 1"},
		{0, "GET k", "(nil)"},
		{0, "PERSIST", "(error) ERR wrong number of arguments for 'persist' command"},
		{0, "PERSIST nope", "(integer) 0"},
		{0, "SET k v", "OK"},
		{0, "PERSIST k", "(integer) 0"},
	})
}

func TestTTLRounding(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "PTTL nope", "(integer) -2"},
		{0, "TTL nope", "(integer) -2"},
		{0, "EXPIRETIME nope", "(integer) -2"},
		{0, "PEXPIRETIME nope", "(integer) -2"},
		{0, "SET k v", "OK"},
		{0, "TTL k", "(integer) -1"},
		{0, "PEXPIRETIME k", "(integer) -1"},
		{0, "PEXPIRE k 1499", "(integer) 1"},
		{0, "TTL k", "(integer) 1"},
		{0, "PEXPIRE k 1500", "(integer) 1"},
		{0, "TTL k", "(integer) 2"},
		{0, "PEXPIRE k 499", "(integer) 1"},
		{0, "TTL k", "(integer) 0"},
		{0, "PEXPIREAT k 33000000000999", "(integer) 1"},
		{0, "EXPIRETIME k", "(integer) 33000000001"},
	})
}

func TestKeysAndFlush(t *testing.T) {
	n := New()
	runSteps(t, n, []step{
		{0, "KEYS", "(error) ERR wrong number of arguments for 'keys' command"},
		{0, "KEYS * x", "(error) ERR wrong number of arguments for 'keys' command"},
		{0, "MSET hello 1 hallo 2 hxllo 3 h?llo 4 h[ae]llo 5 b 6", "OK"},
		{0, "SET gone v PX 1", "OK"},
		{5 * ms, "KEYS *", `[b h?llo "h[ae]llo" hallo hello hxllo]`}, // gone has expired
		{5 * ms, "KEYS h*", `[h?llo "h[ae]llo" hallo hello hxllo]`},
		{5 * ms, "KEYS h?llo", "[h?llo hallo hello hxllo]"},
		{5 * ms, `KEYS h\?llo`, "[h?llo]"},
		{5 * ms, "KEYS h[ae]llo", "[hallo hello]"},
		{5 * ms, "KEYS h[^e]llo", "[h?llo hallo hxllo]"},
		{5 * ms, "KEYS h[a-e]llo", "[hallo hello]"},
		{5 * ms, "KEYS h[e-a]llo", "[hallo hello]"},
		{5 * ms, `KEYS h\[ae]llo`, `["h[ae]llo"]`},
		{5 * ms, "KEYS nomatch", "[]"},
		{0, "FLUSHALL foo", "(error) ERR syntax error"},
		{0, "FLUSHDB x y", "(error) ERR syntax error"},
		{0, "FLUSHALL ASYNC", "OK"},
		{0, "DBSIZE", "(integer) 0"},
		{0, "SET a 1", "OK"},
		{0, "FLUSHDB sync", "OK"},
		{0, "FLUSHDB", "OK"},
		{0, "DBSIZE", "(integer) 0"},
	})
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", false}, // Redis's quirk; KEYS * takes a shortcut that lists "" too {"*", "abc", true}, {"a*", "abc", true}, {"a*c", "abc", true},
		{"a*d", "abc", false}, {"?", "", false}, {"??", "ab", true}, {"a**c", "abbc", true},
		{"[abc]", "b", true}, {"[^abc]", "b", false}, {"[a-c]x", "bx", true},
		{`\*`, "*", true}, {`\*`, "a", false}, {"[", "[", false}, {"[a", "a", true},
		{`[\]]`, "]", true}, {"*a*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"lock:*", "lock:42", true}, {"lock:*", "lock", false},
	} {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
