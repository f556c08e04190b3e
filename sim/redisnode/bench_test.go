package redisnode

import (
	"strconv"
	"testing"
)

// BenchmarkRedsyncTouchEVALSHA is the hot path of a lock extension: EVALSHA
// of redsync's touch script on a held lock (GET, then PEXPIRE).
func BenchmarkRedsyncTouchEVALSHA(b *testing.B) {
	n := New()
	n.Do(0, [][]byte{[]byte("SCRIPT"), []byte("LOAD"), []byte(redsyncTouchScript)})
	n.Do(0, [][]byte{[]byte("SET"), []byte("lock"), []byte("token-123"), []byte("PX"), []byte("8000")})
	args := [][]byte{[]byte("EVALSHA"), []byte(redsyncTouchScriptSHA), []byte("1"), []byte("lock"), []byte("token-123"), []byte("8000")}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if r := n.Do(int64(i)*1000, args); r.Int != 1 {
			b.Fatalf("touch: %s", r)
		}
	}
}

// BenchmarkSetNXPXGetDel is one plain lock cycle: SET NX PX, GET, DEL.
func BenchmarkSetNXPXGetDel(b *testing.B) {
	n := New()
	set := [][]byte{[]byte("SET"), []byte("lock"), []byte("token-123"), []byte("NX"), []byte("PX"), []byte("8000")}
	get := [][]byte{[]byte("GET"), []byte("lock")}
	del := [][]byte{[]byte("DEL"), []byte("lock")}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now := int64(i) * 1000
		if n.Do(now, set).Kind != Status || n.Do(now, get).Kind != Bulk || n.Do(now, del).Int != 1 {
			b.Fatal("lock cycle failed")
		}
	}
}

// BenchmarkParseCommand is the connection side: one pipelined SET NX PX.
func BenchmarkParseCommand(b *testing.B) {
	req := Reply{Kind: Array}
	for _, a := range []string{"SET", "lock", "token-123", "NX", "PX", strconv.Itoa(8000)} {
		req.Array = append(req.Array, bulkReply(a))
	}
	wire := req.AppendRESP2(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, n, err := ParseCommand(wire); n != len(wire) || err != nil {
			b.Fatal(n, err)
		}
	}
}
