package etcdnode

import (
	"slices"
	"testing"
)

func putOp(key string, leaseID int64) *RequestOp {
	return &RequestOp{RequestPut: &PutRequest{Key: b(key), Lease: leaseID}}
}

func rangeOp(r RangeRequest) *RequestOp { return &RequestOp{RequestRange: &r} }

func delOp(key, end string) *RequestOp {
	return &RequestOp{RequestDeleteRange: &DeleteRangeRequest{Key: b(key), RangeEnd: b(end)}}
}

func txnOp(r TxnRequest) *RequestOp { return &RequestOp{RequestTxn: &r} }

// lockTxn is concurrency.Mutex.Lock's txn for key under prefix pfx.
func lockTxn(pfx, key string, leaseID int64) *TxnRequest {
	owner := RangeRequest{Key: b(pfx), RangeEnd: b(pfx[:len(pfx)-1] + string(pfx[len(pfx)-1]+1)),
		SortOrder: SortAscend, SortTarget: SortByCreate, Limit: 1}
	return &TxnRequest{
		Compare: []*Compare{{Target: CompareCreate, Result: CompareEqual, Key: b(key), CreateRevision: 0}},
		Success: []*RequestOp{putOp(key, leaseID), rangeOp(owner)},
		Failure: []*RequestOp{rangeOp(RangeRequest{Key: b(key)}), rangeOp(owner)},
	}
}

func TestTxnMutexLock(t *testing.T) {
	m := New(Options{})
	l1, _ := m.LeaseGrant(0, &LeaseGrantRequest{TTL: 10, ID: 1})
	l2, _ := m.LeaseGrant(0, &LeaseGrantRequest{TTL: 10, ID: 2})
	a, err := m.Txn(0, lockTxn("/lock/", "/lock/1", l1.ID))
	if err != nil {
		t.Fatal(err)
	}
	owner := a.Responses[1].ResponseRange
	if !a.Succeeded || a.Header.Revision != 2 || owner.Kvs[0].CreateRevision != 2 || owner.Header.Revision != 2 {
		t.Fatalf("A's lock: the owner range must see A's own put: %s", asJSON(a))
	}
	bResp, _ := m.Txn(0, lockTxn("/lock/", "/lock/2", l2.ID))
	if string(bResp.Responses[1].ResponseRange.Kvs[0].Key) != "/lock/1" || bResp.Header.Revision != 3 {
		t.Fatalf("B waits behind A: %s", asJSON(bResp))
	}
	again, _ := m.Txn(0, lockTxn("/lock/", "/lock/1", l1.ID))
	if again.Succeeded || again.Header.Revision != 3 || again.Responses[0].ResponseRange.Kvs[0].CreateRevision != 2 {
		t.Fatalf("A again takes the failure branch, no write: %s", asJSON(again))
	}
	// Sub-responses carry only a revision, as etcd's.
	if h := a.Responses[0].ResponsePut.Header; h.ClusterId != 0 || h.RaftTerm != 0 || h.Revision != 2 {
		t.Fatalf("sub-response header %s", asJSON(h))
	}
}

func TestTxnCompares(t *testing.T) {
	m := New(Options{})
	mustPut(t, m, "k", "v", 0) // rev 2
	mustPut(t, m, "k2", "w", 0)
	cases := []struct {
		name string
		c    Compare
		want bool
	}{
		{"version =", Compare{Key: b("k"), Target: CompareVersion, Version: 1}, true},
		{"create >", Compare{Key: b("k"), Target: CompareCreate, Result: CompareGreater, CreateRevision: 1}, true},
		{"mod <", Compare{Key: b("k"), Target: CompareMod, Result: CompareLess, ModRevision: 2}, false},
		{"value =", Compare{Key: b("k"), Target: CompareValue, Value: b("v")}, true},
		{"value != ", Compare{Key: b("k"), Target: CompareValue, Result: CompareNotEqual, Value: b("v")}, false},
		{"lease = 0", Compare{Key: b("k"), Target: CompareLease}, true},
		{"missing: zero version", Compare{Key: b("nope"), Target: CompareVersion}, true},
		{"missing: create = 0", Compare{Key: b("nope"), Target: CompareCreate}, true},
		{"missing: value always fails", Compare{Key: b("nope"), Target: CompareValue, Result: CompareNotEqual, Value: b("x")}, false},
		{"range: every key", Compare{Key: b("k"), RangeEnd: b("l"), Target: CompareVersion, Result: CompareEqual, Version: 1}, true},
		{"range: one fails", Compare{Key: b("k"), RangeEnd: b("l"), Target: CompareMod, Result: CompareEqual, ModRevision: 2}, false},
		{"range ≥", Compare{Key: b("a"), RangeEnd: b("\x00"), Target: CompareCreate, Result: CompareGreater}, true},
	}
	for _, c := range cases {
		resp, err := m.Txn(0, &TxnRequest{Compare: []*Compare{&c.c}})
		if err != nil || resp.Succeeded != c.want {
			t.Errorf("%s: succeeded %v (%v), want %v", c.name, resp.Succeeded, err, c.want)
		}
	}
}

func TestTxnChecks(t *testing.T) {
	m := New(Options{})
	mustPut(t, m, "k", "v", 0)
	many := make([]*RequestOp, 129)
	for i := range many {
		many[i] = rangeOp(RangeRequest{Key: b("k")})
	}
	cases := []struct {
		name string
		r    TxnRequest
		want *Error
	}{
		{"129 ops", TxnRequest{Success: many}, ErrTooManyOps},
		{"nested total over 128", TxnRequest{Success: []*RequestOp{txnOp(TxnRequest{Failure: many[:128]})}}, ErrTooManyOps},
		{"empty compare key", TxnRequest{Compare: []*Compare{{}}}, ErrEmptyKey},
		{"empty op", TxnRequest{Failure: []*RequestOp{{}}}, ErrKeyNotFound},
		{"empty put key", TxnRequest{Success: []*RequestOp{putOp("", 0)}}, ErrEmptyKey},
		{"bad sort", TxnRequest{Success: []*RequestOp{rangeOp(RangeRequest{Key: b("k"), SortOrder: 7})}}, ErrInvalidSortOption},
		{"put twice", TxnRequest{Success: []*RequestOp{putOp("a", 0), putOp("a", 0)}}, ErrDuplicateKey},
		{"put and delete", TxnRequest{Success: []*RequestOp{delOp("a", "c"), putOp("b", 0)}}, ErrDuplicateKey},
		{"put in outer and nested", TxnRequest{Failure: []*RequestOp{putOp("a", 0), txnOp(TxnRequest{Success: []*RequestOp{putOp("a", 0)}})}}, ErrDuplicateKey},
		{"nested delete, outer put", TxnRequest{Success: []*RequestOp{txnOp(TxnRequest{Failure: []*RequestOp{delOp("a", "")}}), putOp("a", 0)}}, ErrDuplicateKey},
		{"lease missing", TxnRequest{Success: []*RequestOp{putOp("a", 99)}}, ErrLeaseNotFound},
		{"ignore value, no key", TxnRequest{Success: []*RequestOp{{RequestPut: &PutRequest{Key: b("zz"), IgnoreValue: true}}}}, ErrKeyNotFound},
		{"below the last compaction (none: -1)", TxnRequest{Success: []*RequestOp{rangeOp(RangeRequest{Key: b("k"), Revision: -2})}}, ErrCompacted},
		{"future revision", TxnRequest{Success: []*RequestOp{putOp("a", 0), rangeOp(RangeRequest{Key: b("k"), Revision: 3})}}, ErrFutureRev},
		{"two requests in an op", TxnRequest{Success: []*RequestOp{{RequestPut: &PutRequest{Key: b("a")}, RequestRange: &RangeRequest{Key: b("a")}}}}, errSeveralRequests},
	}
	for _, c := range cases {
		_, err := m.Txn(0, &c.r)
		if err == nil || err.Error() != c.want.Msg {
			t.Errorf("%s: %v, want %q", c.name, err, c.want.Msg)
		}
	}
	if m.Revision() != 2 {
		t.Fatalf("a refused txn wrote: revision %d", m.Revision())
	}
	// The branch not taken is not checked for leases; then and else may put one key.
	ok := []TxnRequest{
		{Failure: []*RequestOp{putOp("a", 99)}},
		{Success: []*RequestOp{txnOp(TxnRequest{Success: []*RequestOp{putOp("a", 0)}, Failure: []*RequestOp{putOp("a", 0)}})}},
		{Success: []*RequestOp{delOp("a", "\x00"), putOp("b", 0)}}, // etcd's interval check misses "\x00" ends
	}
	for i, r := range ok {
		if _, err := m.Txn(0, &r); err != nil {
			t.Errorf("txn %d refused: %v", i, err)
		}
	}
}

func TestTxnNestedAndOneRevision(t *testing.T) {
	m := New(Options{})
	mustPut(t, m, "x", "1", 0) // rev 2
	r := &TxnRequest{
		Compare: []*Compare{{Key: b("x"), Target: CompareValue, Value: b("1")}},
		Success: []*RequestOp{
			putOp("a", 0),
			txnOp(TxnRequest{
				// Judged before the txn: "a" does not exist yet.
				Compare: []*Compare{{Key: b("a"), Target: CompareVersion, Result: CompareGreater}},
				Success: []*RequestOp{putOp("never", 0)},
				Failure: []*RequestOp{putOp("b", 0), rangeOp(RangeRequest{Key: b("a"), RangeEnd: b("c")})},
			}),
			delOp("x", ""),
		},
	}
	resp, err := m.Txn(0, r)
	if err != nil {
		t.Fatal(err)
	}
	nested := resp.Responses[1].ResponseTxn
	if resp.Header.Revision != 3 || m.Revision() != 3 || nested.Succeeded || *nested.Header != (ResponseHeader{}) {
		t.Fatalf("nested txn: %s", asJSON(resp))
	}
	if got := keysOf(nested.Responses[1].ResponseRange.Kvs); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("nested range sees the txn's writes: %q", got)
	}
	if d := resp.Responses[2].ResponseDeleteRange; d.Deleted != 1 || d.Header.Revision != 3 {
		t.Fatalf("delete: %s", asJSON(d))
	}
	all := mustRange(t, m, &RangeRequest{Key: b("\x00"), RangeEnd: b("\x00")})
	if got := keysOf(all.Kvs); !slices.Equal(got, []string{"a", "b"}) || all.Kvs[0].ModRevision != 3 || all.Kvs[1].ModRevision != 3 {
		t.Fatalf("after: %s", asJSON(all))
	}
	ro, _ := m.Txn(0, &TxnRequest{Success: []*RequestOp{rangeOp(RangeRequest{Key: b("a")})}})
	if ro.Header.Revision != 3 || m.Revision() != 3 {
		t.Fatalf("a read-only txn moved the revision: %s", asJSON(ro))
	}
}

// A put that keeps a value its own txn deleted through a "\x00"-ended range
// passes etcd's checks and then makes etcd panic; the member undoes the txn.
func TestTxnFailingAfterChecksRollsBack(t *testing.T) {
	m := New(Options{})
	l, _ := m.LeaseGrant(0, &LeaseGrantRequest{TTL: 100, ID: 5})
	mustPut(t, m, "a", "old", l.ID)
	w := m.Watch(0, 1, &WatchCreateRequest{Key: b("\x00"), RangeEnd: b("\x00")})
	r := &TxnRequest{Success: []*RequestOp{
		putOp("new", 0),
		delOp("a", "\x00"),
		{RequestPut: &PutRequest{Key: b("a"), IgnoreValue: true}},
	}}
	_, err := m.Txn(0, r)
	if err == nil || err.(*Error).Code != CodeUnknown || err.Error() != "applyTxn: failed Put: etcdserver: key not found" {
		t.Fatalf("err = %v", err)
	}
	all := mustRange(t, m, &RangeRequest{Key: b("\x00"), RangeEnd: b("\x00")})
	ttl, _ := m.LeaseTimeToLive(0, &LeaseTimeToLiveRequest{ID: 5, Keys: true})
	if m.Revision() != 2 || len(all.Kvs) != 1 || string(all.Kvs[0].Value) != "old" || len(ttl.Keys) != 1 {
		t.Fatalf("not undone: %s %s", asJSON(all), asJSON(ttl))
	}
	if len(w) != 1 || len(m.TakeDeliveries()) != 0 {
		t.Fatalf("an undone txn notified watchers")
	}
	if u := m.Unsupported(); !slices.Equal(u, []string{"txn failed after its checks"}) {
		t.Fatalf("Unsupported() = %q", u)
	}
}
