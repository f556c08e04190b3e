package etcdnode

import "fmt"

// fixedSteps are the cases the differential test always sends, each a
// behaviour the member copies from etcd's source, checked here against
// the real thing. They run on a fresh server, in order.
func fixedSteps() []diffStep {
	var s []diffStep
	add := func(name string, reqs ...any) {
		for _, r := range reqs {
			switch r := r.(type) {
			case *WatchCreateRequest:
				s = append(s, watchStep(name, watchMsg{Create: r}))
			case *LeaseGrantRequest, *LeaseRevokeRequest, *LeaseTimeToLiveRequest, *LeaseLeasesRequest, *LeaseKeepAliveRequest:
				s = append(s, leaseStep(name, r))
			default:
				s = append(s, kvStep(name, r))
			}
		}
	}
	add("fresh", &RangeRequest{Key: b("a")}, &RangeRequest{Key: b("\x00"), RangeEnd: b("\x00")})
	add("versions", &PutRequest{Key: b("k"), Value: b("1")}, &PutRequest{Key: b("k"), Value: b("2"), PrevKv: true},
		&DeleteRangeRequest{Key: b("k"), PrevKv: true}, &DeleteRangeRequest{Key: b("k")},
		&PutRequest{Key: b("k"), Value: b("3")}, &RangeRequest{Key: b("k")}, &RangeRequest{Key: b("k"), Revision: 3})
	add("empty keys", &RangeRequest{}, &PutRequest{}, &DeleteRangeRequest{}, &TxnRequest{Compare: []*Compare{{}}})
	add("put flags", &PutRequest{Key: b("k"), Value: b("x"), IgnoreValue: true}, &PutRequest{Key: b("k"), Lease: 5, IgnoreLease: true},
		&PutRequest{Key: b("nope"), IgnoreLease: true}, &PutRequest{Key: b("k"), Lease: 5}, &PutRequest{Key: b("k"), IgnoreValue: true, PrevKv: true})
	add("revisions", &RangeRequest{Key: b("k"), Revision: 100}, &RangeRequest{Key: b("k"), Revision: -5},
		&TxnRequest{Success: []*RequestOp{rangeOp(RangeRequest{Key: b("k"), Revision: -1})}},
		&TxnRequest{Success: []*RequestOp{rangeOp(RangeRequest{Key: b("k"), Revision: -2})}})
	s = append(s, sortTieSteps()...)
	add("mutex", lockTxn("/lock/", "/lock/1", 0), lockTxn("/lock/", "/lock/2", 0), lockTxn("/lock/", "/lock/1", 0),
		&RangeRequest{Key: b("/lock/"), RangeEnd: b("/lock0"), SortOrder: SortDescend, SortTarget: SortByCreate, Limit: 1, MaxCreateRevision: 20})
	add("txn checks", &TxnRequest{Success: []*RequestOp{putOp("a", 0), putOp("a", 0)}},
		&TxnRequest{Success: []*RequestOp{delOp("a", "c"), putOp("b", 0)}},
		&TxnRequest{Success: []*RequestOp{txnOp(TxnRequest{Failure: []*RequestOp{delOp("a", "")}}), putOp("a", 0)}},
		&TxnRequest{Success: []*RequestOp{putOp("a", 0), txnOp(TxnRequest{Failure: []*RequestOp{delOp("a", "")}})}},
		&TxnRequest{Success: []*RequestOp{txnOp(TxnRequest{Success: []*RequestOp{putOp("n", 0)}, Failure: []*RequestOp{putOp("n", 0)}})}},
		&TxnRequest{Success: []*RequestOp{delOp("a", "\x00"), putOp("b", 0)}},
		&TxnRequest{Success: []*RequestOp{{}}}, &TxnRequest{Success: []*RequestOp{putOp("a", 77)}},
		&TxnRequest{Failure: []*RequestOp{putOp("a", 77)}}, &TxnRequest{Success: manyOps(129)}, &TxnRequest{Success: manyOps(128)})
	add("nested", &TxnRequest{
		Compare: []*Compare{{Key: b("b"), Target: CompareVersion, Result: CompareGreater}},
		Success: []*RequestOp{putOp("x", 0), txnOp(TxnRequest{
			Compare: []*Compare{{Key: b("x"), Target: CompareCreate, Result: CompareEqual}},
			Success: []*RequestOp{putOp("y", 0), rangeOp(RangeRequest{Key: b("x"), RangeEnd: b("z")})},
		}), rangeOp(RangeRequest{Key: b("a"), RangeEnd: b("\x00"), CountOnly: true})},
	})
	add("compares on missing keys", &TxnRequest{Compare: []*Compare{{Key: b("missing"), Target: CompareValue, Result: CompareNotEqual, Value: b("q")}}},
		&TxnRequest{Compare: []*Compare{{Key: b("missing"), Target: CompareMod, Result: CompareLess, ModRevision: 1}}})
	add("leases", &LeaseGrantRequest{TTL: 1, ID: 1000}, &LeaseRevokeRequest{ID: 1000}, &LeaseGrantRequest{TTL: 100},
		&LeaseGrantRequest{TTL: 200, ID: 7}, &LeaseGrantRequest{TTL: 5, ID: 7}, &LeaseGrantRequest{TTL: MaxLeaseTTLSeconds + 1},
		&PutRequest{Key: b("l1"), Lease: 7}, &PutRequest{Key: b("l2"), Lease: 7}, &LeaseTimeToLiveRequest{ID: 7, Keys: true},
		&LeaseTimeToLiveRequest{ID: 8}, &LeaseKeepAliveRequest{ID: 7}, &LeaseKeepAliveRequest{ID: 8}, &LeaseLeasesRequest{},
		&PutRequest{Key: b("l1")}, &LeaseRevokeRequest{ID: 7}, &LeaseRevokeRequest{ID: 7}, &RangeRequest{Key: b("l"), RangeEnd: b("m")})
	add("watches", &WatchCreateRequest{Key: b("\x00"), RangeEnd: b("\x00"), StartRevision: 1, PrevKv: true},
		&WatchCreateRequest{Key: b("l"), RangeEnd: b("m"), StartRevision: 2, Filters: []FilterType{FilterNoPut}},
		&WatchCreateRequest{Key: b("k"), RangeEnd: b("a")}, // (3.4 takes a negative start; 3.6 refuses it, as the member)
		&WatchCreateRequest{RangeEnd: b("\x00"), StartRevision: 5, WatchId: 3})
	// (3.4 answers a progress request on a stream without watches; 3.6 does not, nor the member.)
	s = append(s, watchStep("watch stream", watchMsg{Create: &WatchCreateRequest{Key: b("k"), WatchId: 1}},
		watchMsg{Create: &WatchCreateRequest{Key: b("k")}}, watchMsg{Create: &WatchCreateRequest{Key: b("k")}},
		watchMsg{Create: &WatchCreateRequest{Key: b("k"), WatchId: 2}}, watchMsg{Progress: &struct{}{}},
		watchMsg{Cancel: &watchCancel{WatchId: 0}}, watchMsg{Cancel: &watchCancel{WatchId: 0}}, watchMsg{Cancel: &watchCancel{WatchId: 2}}))
	return s
}

// sortTieSteps writes thirteen keys in one revision and sorts them by
// revision, where etcd's unstable sort decides the order of the ties.
func sortTieSteps() []diffStep {
	var ops []*RequestOp
	for c := 'a'; c <= 'm'; c++ {
		ops = append(ops, putOp(fmt.Sprintf("t/%c", c), 0))
	}
	s := []diffStep{kvStep("ties", &TxnRequest{Success: ops}), kvStep("ties", &PutRequest{Key: b("t/c")})}
	for _, order := range []SortOrder{SortNone, SortAscend, SortDescend} {
		for _, target := range []SortTarget{SortByKey, SortByVersion, SortByCreate, SortByMod, SortByValue} {
			s = append(s, kvStep("ties", &RangeRequest{Key: b("t/"), RangeEnd: b("t0"), SortOrder: order, SortTarget: target}))
		}
	}
	return s
}

func manyOps(n int) []*RequestOp {
	ops := make([]*RequestOp, n)
	for i := range ops {
		ops[i] = rangeOp(RangeRequest{Key: b("k")})
	}
	return ops
}
