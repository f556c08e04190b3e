package redisnode

import "testing"

// evalArgs builds EVAL or EVALSHA (by SHA when sha != "") with one key.
func evalArgs(scriptOrSHA string, bySHA bool, key string, argv ...string) [][]byte {
	name := "EVAL"
	if bySHA {
		name = "EVALSHA"
	}
	args := [][]byte{[]byte(name), []byte(scriptOrSHA), []byte("1"), []byte(key)}
	for _, a := range argv {
		args = append(args, []byte(a))
	}
	return args
}

// lockCase runs one script against a prepared key and checks the reply and
// what the key holds afterwards.
type lockCase struct {
	name      string
	setup     []string // commands run first, at time 0
	script    string
	argv      []string
	want      string // reply
	wantValue string // GET lock afterwards
	wantPTTL  int64  // PTTL lock afterwards (at time 0)
}

func runLockCases(t *testing.T, cases []lockCase) {
	t.Helper()
	for _, tc := range cases {
		for _, bySHA := range []bool{false, true} {
			n := New()
			for _, c := range tc.setup {
				if r := n.Do(0, words(t, c)); r.IsError() {
					t.Fatalf("%s: setup %q: %s", tc.name, c, r)
				}
			}
			body := tc.script
			if bySHA {
				sha := n.Do(0, [][]byte{[]byte("SCRIPT"), []byte("LOAD"), []byte(tc.script)})
				body = sha.Str
			}
			if got := n.Do(0, evalArgs(body, bySHA, "lock", tc.argv...)).String(); got != tc.want {
				t.Errorf("%s (by SHA %v): reply %s, want %s", tc.name, bySHA, got, tc.want)
			}
			if got := n.Do(0, words(t, "GET lock")).String(); got != tc.wantValue {
				t.Errorf("%s (by SHA %v): lock holds %s, want %s", tc.name, bySHA, got, tc.wantValue)
			}
			if got := n.Do(0, words(t, "PTTL lock")).Int; got != tc.wantPTTL {
				t.Errorf("%s (by SHA %v): PTTL %d, want %d", tc.name, bySHA, got, tc.wantPTTL)
			}
		}
	}
}

func TestRedsyncScripts(t *testing.T) {
	// The library sends these SHA1s with EVALSHA; SCRIPT LOAD of our copies must agree.
	n := New()
	for sha, body := range map[string]string{
		redsyncDeleteScriptSHA:         redsyncDeleteScript,
		redsyncTouchScriptSHA:          redsyncTouchScript,
		redsyncTouchWithSetNXScriptSHA: redsyncTouchWithSetNXScript,
	} {
		if got := n.Do(0, [][]byte{[]byte("SCRIPT"), []byte("LOAD"), []byte(body)}).Str; got != sha {
			t.Errorf("SCRIPT LOAD gave %s, redsync sends %s", got, sha)
		}
	}
	runLockCases(t, []lockCase{
		{"delete: held", []string{"SET lock tok PX 8000"}, redsyncDeleteScript, []string{"tok"}, "(integer) 1", "(nil)", -2},
		{"delete: missing", nil, redsyncDeleteScript, []string{"tok"}, "(integer) -1", "(nil)", -2},
		{"delete: other owner", []string{"SET lock other PX 8000"}, redsyncDeleteScript, []string{"tok"}, "(integer) 0", `"other"`, 8000},
		{"touch: held", []string{"SET lock tok PX 100"}, redsyncTouchScript, []string{"tok", "8000"}, "(integer) 1", `"tok"`, 8000},
		{"touch: missing", nil, redsyncTouchScript, []string{"tok", "8000"}, "(integer) 0", "(nil)", -2},
		{"touch: other owner", []string{"SET lock other PX 100"}, redsyncTouchScript, []string{"tok", "8000"}, "(integer) 0", `"other"`, 100},
		{"touch: bad ttl", []string{"SET lock tok PX 100"}, redsyncTouchScript, []string{"tok", "x"},
			"(error) ERR value is not an integer or out of range script: d75bb8b5bd13532ddedd17762e772346e39b321e, on @user_script:3.", `"tok"`, 100},
		{"touch-setnx: held", []string{"SET lock tok PX 100"}, redsyncTouchWithSetNXScript, []string{"tok", "8000"}, "(integer) 1", `"tok"`, 8000},
		{"touch-setnx: missing", nil, redsyncTouchWithSetNXScript, []string{"tok", "8000"}, "(integer) 1", `"tok"`, 8000},
		{"touch-setnx: other owner", []string{"SET lock other PX 100"}, redsyncTouchWithSetNXScript, []string{"tok", "8000"}, "(integer) 0", `"other"`, 100},
	})
}

func TestRedislockScripts(t *testing.T) {
	// obtain: ARGV = value, token length, ttl ms. The value is token + metadata;
	// re-obtaining with the same token (the first 22 bytes) overwrites.
	const tok = "abcdefghijklmnopqrstuv"
	runLockCases(t, []lockCase{
		{"obtain: free", nil, redislockObtain, []string{tok + "meta", "22", "5000"}, "OK", `"` + tok + `meta"`, 5000},
		{"obtain: same token", []string{"SET lock " + tok + "old PX 100"}, redislockObtain, []string{tok + "new", "22", "5000"}, "OK", `"` + tok + `new"`, 5000},
		{"obtain: other token", []string{"SET lock zzzzzzzzzzzzzzzzzzzzzzold PX 100"}, redislockObtain, []string{tok, "22", "5000"}, "(nil)", `"zzzzzzzzzzzzzzzzzzzzzzold"`, 100},
		{"refresh: held", []string{"SET lock " + tok + " PX 100"}, redislockRefresh, []string{tok, "5000"}, "(integer) 1", `"` + tok + `"`, 5000},
		{"refresh: lost", nil, redislockRefresh, []string{tok, "5000"}, "(integer) 0", "(nil)", -2},
		{"release: held", []string{"SET lock " + tok + " PX 100"}, redislockRelease, []string{tok}, "(integer) 1", "(nil)", -2},
		{"release: other", []string{"SET lock other PX 100"}, redislockRelease, []string{tok}, "(integer) 0", `"other"`, 100},
		{"pttl: held", []string{"SET lock " + tok + " PX 100"}, redislockPTTL, []string{tok}, "(integer) 100", `"` + tok + `"`, 100},
		{"pttl: other", []string{"SET lock other PX 100"}, redislockPTTL, []string{tok}, "(integer) -3", `"other"`, 100},
	})
}

func TestClientScriptFlowAfterRestart(t *testing.T) {
	// go-redis's Script.Run: EVALSHA, and on NOSCRIPT, EVAL (which caches it again).
	n := New()
	sha := n.Do(0, [][]byte{[]byte("SCRIPT"), []byte("LOAD"), []byte(redsyncTouchScript)}).Str
	n.Do(0, words(t, "SET lock tok PX 100"))
	n.Restart(false)
	if got := n.Do(10*ms, evalArgs(sha, true, "lock", "tok", "500")).String(); got != "(error) NOSCRIPT No matching script. Please use EVAL." {
		t.Fatalf("EVALSHA after restart: %s", got)
	}
	if got := n.Do(10*ms, evalArgs(redsyncTouchScript, false, "lock", "tok", "500")).String(); got != "(integer) 1" {
		t.Fatalf("EVAL after NOSCRIPT: %s", got)
	}
	if got := n.Do(20*ms, evalArgs(sha, true, "lock", "tok", "500")).String(); got != "(integer) 1" {
		t.Fatalf("EVALSHA after EVAL: %s", got)
	}
	runSteps(t, n, []step{{20 * ms, "PEXPIRETIME lock", "(integer) 520"}})
}
