package etcdnode

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

const sec = int64(time.Second)

func b(s string) []byte { return []byte(s) }

func mustPut(t *testing.T, m *Member, key, value string, leaseID int64) *PutResponse {
	t.Helper()
	resp, err := m.Put(0, &PutRequest{Key: b(key), Value: b(value), Lease: leaseID})
	if err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
	return resp
}

func mustRange(t *testing.T, m *Member, r *RangeRequest) *RangeResponse {
	t.Helper()
	resp, err := m.Range(0, r)
	if err != nil {
		t.Fatalf("range %q: %v", r.Key, err)
	}
	return resp
}

func keysOf(kvs []*KeyValue) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = string(kv.Key)
	}
	return out
}

func wantErr(t *testing.T, err error, want *Error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, want) {
		t.Fatalf("error %v, want %q (code %d)", err, want.Msg, want.Code)
	}
}

func asJSON(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func TestFreshMemberHeader(t *testing.T) {
	m := New(Options{})
	resp := mustRange(t, m, &RangeRequest{Key: b("a")})
	want := &ResponseHeader{ClusterId: ClusterID, MemberId: MemberID, Revision: 1, RaftTerm: 2}
	if *resp.Header != *want || resp.Count != 0 || len(resp.Kvs) != 0 || resp.More {
		t.Fatalf("fresh range = %s", asJSON(resp))
	}
}

func TestPutRevisionsAndVersions(t *testing.T) {
	m := New(Options{})
	steps := []struct {
		op                      string // "put" or "del"
		wantRev                 int64
		wantCreate, wantVersion int64 // of key "k" after the step; 0: absent
	}{
		{"put", 2, 2, 1},
		{"put", 3, 2, 2},
		{"del", 4, 0, 0},
		{"del", 4, 0, 0}, // nothing deleted: no new revision
		{"put", 5, 5, 1}, // a delete resets the version and the create revision
	}
	for i, s := range steps {
		var rev int64
		if s.op == "put" {
			rev = mustPut(t, m, "k", "v", 0).Header.Revision
		} else {
			resp, err := m.DeleteRange(0, &DeleteRangeRequest{Key: b("k")})
			if err != nil {
				t.Fatal(err)
			}
			rev = resp.Header.Revision
		}
		got := mustRange(t, m, &RangeRequest{Key: b("k")})
		if rev != s.wantRev || m.Revision() != s.wantRev {
			t.Fatalf("step %d: revision %d (member %d), want %d", i, rev, m.Revision(), s.wantRev)
		}
		if s.wantCreate == 0 {
			if len(got.Kvs) != 0 {
				t.Fatalf("step %d: key still there: %s", i, asJSON(got))
			}
			continue
		}
		kv := got.Kvs[0]
		if kv.CreateRevision != s.wantCreate || kv.ModRevision != s.wantRev || kv.Version != s.wantVersion {
			t.Fatalf("step %d: %s", i, asJSON(kv))
		}
	}
}

func TestPutPrevKvAndIgnoreFlags(t *testing.T) {
	m := New(Options{})
	_, err := m.Put(0, &PutRequest{})
	wantErr(t, err, ErrEmptyKey)
	_, err = m.Put(0, &PutRequest{Key: b("k"), Value: b("x"), IgnoreValue: true})
	wantErr(t, err, ErrValueProvided)
	_, err = m.Put(0, &PutRequest{Key: b("k"), Lease: 7, IgnoreLease: true})
	wantErr(t, err, ErrLeaseProvided)
	_, err = m.Put(0, &PutRequest{Key: b("k"), IgnoreValue: true})
	wantErr(t, err, ErrKeyNotFound)
	_, err = m.Put(0, &PutRequest{Key: b("k"), Lease: 7})
	wantErr(t, err, ErrLeaseNotFound)
	if m.Revision() != 1 {
		t.Fatalf("a refused put wrote: revision %d", m.Revision())
	}

	first, _ := m.Put(0, &PutRequest{Key: b("k"), Value: b("v1"), PrevKv: true})
	if first.PrevKv != nil {
		t.Fatalf("prev of a new key: %s", asJSON(first))
	}
	l, _ := m.LeaseGrant(0, &LeaseGrantRequest{TTL: 100, ID: 7})
	second, _ := m.Put(0, &PutRequest{Key: b("k"), Value: b("v2"), Lease: l.ID, PrevKv: true})
	if string(second.PrevKv.Value) != "v1" || second.PrevKv.ModRevision != 2 {
		t.Fatalf("prev = %s", asJSON(second.PrevKv))
	}
	if _, err := m.Put(0, &PutRequest{Key: b("k"), IgnoreValue: true}); err != nil {
		t.Fatal(err)
	}
	kv := mustRange(t, m, &RangeRequest{Key: b("k")}).Kvs[0]
	if string(kv.Value) != "v2" || kv.Lease != 0 || kv.Version != 3 {
		t.Fatalf("ignore_value kept the value, dropped the lease: %s", asJSON(kv))
	}
	m.Put(0, &PutRequest{Key: b("k"), Value: b("v3"), Lease: 7})
	m.Put(0, &PutRequest{Key: b("k"), Value: b("v4"), IgnoreLease: true})
	kv = mustRange(t, m, &RangeRequest{Key: b("k")}).Kvs[0]
	if string(kv.Value) != "v4" || kv.Lease != 7 {
		t.Fatalf("ignore_lease: %s", asJSON(kv))
	}
}

func TestRangeKinds(t *testing.T) {
	m := New(Options{})
	for _, k := range []string{"a", "ab", "abc", "b", "b\x00", "c"} {
		mustPut(t, m, k, "v", 0)
	}
	cases := []struct {
		key, end string
		want     []string
	}{
		{"ab", "", []string{"ab"}},
		{"ab", "ac", []string{"ab", "abc"}}, // the prefix "ab"
		{"b", "\x00", []string{"b", "b\x00", "c"}},
		{"\x00", "\x00", []string{"a", "ab", "abc", "b", "b\x00", "c"}},
		{"b", "a", []string{}}, // key ≥ end: empty
		{"zz", "", []string{}},
	}
	for _, c := range cases {
		resp := mustRange(t, m, &RangeRequest{Key: b(c.key), RangeEnd: b(c.end)})
		if got := keysOf(resp.Kvs); !slices.Equal(got, c.want) || resp.Count != int64(len(c.want)) {
			t.Errorf("range [%q, %q) = %q count %d, want %q", c.key, c.end, got, resp.Count, c.want)
		}
	}
	_, err := m.Range(0, &RangeRequest{})
	wantErr(t, err, ErrEmptyKey)
	_, err = m.Range(0, &RangeRequest{Key: b("a"), SortOrder: 3})
	wantErr(t, err, ErrInvalidSortOption)
	_, err = m.Range(0, &RangeRequest{Key: b("a"), SortTarget: 5})
	wantErr(t, err, ErrInvalidSortOption)
}

func TestRangeLimitCountFilters(t *testing.T) {
	m := New(Options{})
	for _, k := range []string{"p/a", "p/b", "p/c", "p/d"} { // revisions 2..5
		mustPut(t, m, k, "v-"+k, 0)
	}
	all := func(r RangeRequest) *RangeRequest { r.Key, r.RangeEnd = b("p/"), b("p0"); return &r }
	cases := []struct {
		name      string
		r         *RangeRequest
		want      []string
		more      bool
		wantCount int64
	}{
		{"limit", all(RangeRequest{Limit: 2}), []string{"p/a", "p/b"}, true, 4},
		{"limit exact", all(RangeRequest{Limit: 4}), []string{"p/a", "p/b", "p/c", "p/d"}, false, 4},
		{"count only", all(RangeRequest{CountOnly: true, Limit: 1}), []string{}, false, 4},
		{"max create", all(RangeRequest{MaxCreateRevision: 3}), []string{"p/a", "p/b"}, false, 4},
		{"min mod", all(RangeRequest{MinModRevision: 4}), []string{"p/c", "p/d"}, false, 4},
		{"last create before", all(RangeRequest{SortOrder: SortDescend, SortTarget: SortByCreate, Limit: 1, MaxCreateRevision: 4}), []string{"p/c"}, true, 4},
		{"first create", all(RangeRequest{SortOrder: SortAscend, SortTarget: SortByCreate, Limit: 1}), []string{"p/a"}, true, 4},
		{"key descend", all(RangeRequest{SortOrder: SortDescend}), []string{"p/d", "p/c", "p/b", "p/a"}, false, 4},
		{"value, no order = ascend", all(RangeRequest{SortTarget: SortByValue, Limit: 3}), []string{"p/a", "p/b", "p/c"}, true, 4},
		{"historic", all(RangeRequest{Revision: 3}), []string{"p/a", "p/b"}, false, 2},
	}
	for _, c := range cases {
		resp := mustRange(t, m, c.r)
		if got := keysOf(resp.Kvs); !slices.Equal(got, c.want) || resp.More != c.more || resp.Count != c.wantCount {
			t.Errorf("%s: %q more %v count %d, want %q %v %d", c.name, got, resp.More, resp.Count, c.want, c.more, c.wantCount)
		}
		if resp.Header.Revision != 5 {
			t.Errorf("%s: header revision %d, want the current 5", c.name, resp.Header.Revision)
		}
	}
	keysOnly := mustRange(t, m, all(RangeRequest{KeysOnly: true}))
	if keysOnly.Kvs[0].Value != nil || keysOnly.Kvs[0].Version != 1 {
		t.Errorf("keys only: %s", asJSON(keysOnly.Kvs[0]))
	}
	_, err := m.Range(0, &RangeRequest{Key: b("p/a"), Revision: 6})
	wantErr(t, err, ErrFutureRev)
}

// TestSortTiesAsEtcd pins the order of keys that share a revision: etcd's
// sort.Sort is not stable, so the order within ties is whatever its
// algorithm makes of the key-ordered input (checked against a real etcd by
// the differential test).
func TestSortTiesAsEtcd(t *testing.T) {
	m := New(Options{})
	var ops []*RequestOp
	for _, k := range []string{"t/a", "t/b", "t/c", "t/d", "t/e", "t/f", "t/g", "t/h", "t/i", "t/j", "t/k", "t/l", "t/m"} {
		ops = append(ops, &RequestOp{RequestPut: &PutRequest{Key: b(k)}})
	}
	if _, err := m.Txn(0, &TxnRequest{Success: ops}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, m, "t/c", "", 0)
	resp := mustRange(t, m, &RangeRequest{Key: b("t/"), RangeEnd: b("t0"), SortOrder: SortDescend, SortTarget: SortByMod})
	got := keysOf(resp.Kvs)
	// What a real etcd 3.4.23 answered to the same requests.
	want := []string{"t/c", "t/g", "t/b", "t/d", "t/e", "t/f", "t/a", "t/h", "t/i", "t/j", "t/k", "t/l", "t/m"}
	if !slices.Equal(got, want) {
		t.Fatalf("descend by mod = %q, want %q", got, want)
	}
}

func TestDeleteRange(t *testing.T) {
	m := New(Options{})
	_, err := m.DeleteRange(0, &DeleteRangeRequest{})
	wantErr(t, err, ErrEmptyKey)
	for _, k := range []string{"a", "b", "c"} {
		mustPut(t, m, k, "v"+k, 0)
	}
	resp, _ := m.DeleteRange(0, &DeleteRangeRequest{Key: b("a"), RangeEnd: b("c"), PrevKv: true})
	if resp.Deleted != 2 || resp.Header.Revision != 5 || !slices.Equal(keysOf(resp.PrevKvs), []string{"a", "b"}) {
		t.Fatalf("delete [a, c) = %s", asJSON(resp))
	}
	resp, _ = m.DeleteRange(0, &DeleteRangeRequest{Key: b("a"), RangeEnd: b("\x00")})
	if resp.Deleted != 1 || resp.Header.Revision != 6 {
		t.Fatalf("delete ≥ a = %s", asJSON(resp))
	}
	old := mustRange(t, m, &RangeRequest{Key: b("a"), RangeEnd: b("\x00"), Revision: 4})
	if !slices.Equal(keysOf(old.Kvs), []string{"a", "b", "c"}) {
		t.Fatalf("history lost: %s", asJSON(old))
	}
}

func TestResponsesShareNoBytes(t *testing.T) {
	m := New(Options{})
	key := b("k")
	m.Put(0, &PutRequest{Key: key, Value: b("v")})
	key[0] = 'x' // the caller reuses its buffer
	resp := mustRange(t, m, &RangeRequest{Key: b("k")})
	resp.Kvs[0].Value[0] = 'w'
	if again := mustRange(t, m, &RangeRequest{Key: b("k")}); string(again.Kvs[0].Value) != "v" {
		t.Fatalf("stored value changed through a response: %q", again.Kvs[0].Value)
	}
}
