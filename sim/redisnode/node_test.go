package redisnode

import (
	"slices"
	"testing"
)

const ms = int64(1e6) // node time is in ns; tables read better in ms

// step is one command of a scripted exchange: at node time at (ns), send cmd
// (split like an inline command, so quotes work), expect the reply's String.
type step struct {
	at   int64
	cmd  string
	want string
}

func runSteps(t *testing.T, n *Node, steps []step) {
	t.Helper()
	for i, s := range steps {
		if got := n.Do(s.at, words(t, s.cmd)).String(); got != s.want {
			t.Errorf("step %d at %dns: %s\n got: %s\nwant: %s", i, s.at, s.cmd, got, s.want)
		}
	}
}

func words(t testing.TB, cmd string) [][]byte {
	t.Helper()
	args, ok := splitArgs([]byte(cmd))
	if !ok {
		t.Fatalf("bad test command %q", cmd)
	}
	return args
}

func TestExpiryBoundaryFollowsRedis(t *testing.T) {
	// PX 100 at 1.5ms: Redis floors now to 1ms, so the key expires at 101ms,
	// and keeps it during that millisecond ("now > when").
	runSteps(t, New(), []step{
		{1*ms + ms/2, "SET k v PX 100", "OK"},
		{1*ms + ms/2, "PEXPIRETIME k", "(integer) 101"},
		{100 * ms, "PTTL k", "(integer) 1"},
		{101 * ms, "PTTL k", "(integer) 0"},
		{101*ms + ms - 1, "GET k", `"v"`},
		{102 * ms, "GET k", "(nil)"},
		{102 * ms, "PTTL k", "(integer) -2"},
	})
}

func TestClockGoingBackwards(t *testing.T) {
	n := New()
	runSteps(t, n, []step{
		{1000 * ms, "SET a 1 PX 100", "OK"}, // expires at 1100ms
		{1000 * ms, "SET b 2 PX 100", "OK"},
		{1200 * ms, "GET a", "(nil)"}, // touched while expired: deleted
		// The clock steps back: b, never touched, is alive again (as in Redis
		// between two active-expiry cycles); a stays deleted.
		{1050 * ms, "GET a", "(nil)"},
		{1050 * ms, "GET b", `"2"`},
		{1050 * ms, "PTTL b", "(integer) 50"},
		{900 * ms, "PTTL b", "(integer) 200"},
		{900 * ms, "SET c 3 PX 10", "OK"}, // relative to the node's clock, whatever it reads
		{900 * ms, "PEXPIRETIME c", "(integer) 910"},
	})
	if got := n.ExpireCycle(2000 * ms); got != 2 {
		t.Errorf("ExpireCycle removed %d keys, want 2 (b and c)", got)
	}
	runSteps(t, n, []step{{1050 * ms, "GET b", "(nil)"}})
}

func TestNegativeNodeTime(t *testing.T) {
	// A node clock before the epoch floors to the containing millisecond.
	runSteps(t, New(), []step{
		{-ms / 2, "SET k v PX 1000", "OK"},
		{-ms / 2, "PEXPIRETIME k", "(integer) 999"},
		{-ms / 2, "TIME", "[-1 999500]"},
	})
}

func TestRestart(t *testing.T) {
	n := New()
	runSteps(t, n, []step{
		{0, "SET keep v PX 5000", "OK"},
		{0, "SET plain v", "OK"},
		{0, "SCRIPT LOAD \"return 1\"", `"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"`},
		{0, "EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0", "(integer) 1"},
	})
	n.Restart(false)
	runSteps(t, n, []step{
		{1000 * ms, "PEXPIRETIME keep", "(integer) 5000"}, // the absolute expiry survives a reload
		{1000 * ms, "GET plain", `"v"`},
		{1000 * ms, "EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
		{1000 * ms, "SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "[0]"},
		{1000 * ms, "EVAL \"return 1\" 0", "(integer) 1"},
		{1000 * ms, "EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0", "(integer) 1"},
		{6000 * ms, "GET keep", "(nil)"},
	})
	n.Restart(true)
	runSteps(t, n, []step{
		{0, "DBSIZE", "(integer) 0"},
		{0, "GET plain", "(nil)"},
		{0, "EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0", "(error) NOSCRIPT No matching script. Please use EVAL."},
	})
}

func TestUnsupportedAndUnknownCommand(t *testing.T) {
	n := New()
	runSteps(t, n, []step{
		{0, "xyz a b", "(error) ERR unknown command 'xyz', with args beginning with: 'a' 'b' "},
		{0, "xyz", "(error) ERR unknown command 'xyz', with args beginning with: "},
		{0, "HSET h f v", "(error) ERR unknown command 'HSET', with args beginning with: 'h' 'f' 'v' "},
		{0, "hset h f v", "(error) ERR unknown command 'hset', with args beginning with: 'h' 'f' 'v' "},
		{0, "CLIENT LIST", "(error) ERR unknown subcommand 'LIST'. Try CLIENT HELP."},
		{0, "SCRIPT KILL", "(error) ERR unknown subcommand 'KILL'. Try SCRIPT HELP."},
		{0, "EVAL \"return redis.call('lpush', 'l', 'x')\" 0", "(error) ERR Unknown Redis command called from script script: c39cdfb648f232123f9e499534276b5b317ba18e, on @user_script:1."},
	})
	want := []string{"client|list", "hset", "lpush", "script|kill", "xyz"}
	if got := n.Unsupported(); !slices.Equal(got, want) {
		t.Errorf("Unsupported() = %q, want %q", got, want)
	}
}

func TestUnknownCommandArgumentsAreCutAt128Bytes(t *testing.T) {
	long := make([]byte, 200)
	for i := range long {
		long[i] = 'a'
	}
	r := New().Do(0, [][]byte{[]byte("nope"), long, []byte("b")})
	want := "ERR unknown command 'nope', with args beginning with: '" + string(long[:128]) + "' "
	if r.Str != want {
		t.Errorf("got %q\nwant %q", r.Str, want)
	}
}

func TestKeysSnapshot(t *testing.T) {
	n := New()
	runSteps(t, n, []step{
		{0, "SET b 2 PX 10", "OK"},
		{0, "SET a 1", "OK"},
		{0, "SET c 3 PX 1", "OK"},
	})
	got := n.Keys(5 * ms)
	want := []Entry{{Key: "a", Value: "1"}, {Key: "b", Value: "2", ExpireAt: 10 * ms}}
	if !slices.Equal(got, want) {
		t.Errorf("Keys = %+v, want %+v", got, want)
	}
	if len(n.db) != 3 {
		t.Errorf("Keys removed keys: %d stored, want 3", len(n.db))
	}
}

func TestCommandNamesAreCaseInsensitive(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "sEt k v nX pX 100", "OK"},
		{0, "GeT k", `"v"`},
		{0, "Client SetName x", "OK"},
	})
}
