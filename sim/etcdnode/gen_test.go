package etcdnode

import "pgregory.net/rapid"

// Request generators shared by the model test and the differential test.
// Keys are few and close together, so ranges, prefixes, "\x00" ends and
// duplicate keys in a txn all happen often. Lease IDs are explicit (1-3
// granted, 99 never), so the same requests mean the same on a real etcd.

var (
	genKey   = rapid.SampledFrom([]string{"a", "a/1", "a/2", "b", "b\x00", "c"})
	genEnd   = rapid.SampledFrom([]string{"", "", "\x00", "a0", "a/2", "b", "b\x00", "c", "d"})
	genValue = rapid.SampledFrom([]string{"", "x", "y", "zz"})
	genLease = rapid.SampledFrom([]int64{0, 0, 0, 1, 2, 3, 99})
)

func genPut() *rapid.Generator[*PutRequest] {
	return rapid.Custom(func(t *rapid.T) *PutRequest {
		r := &PutRequest{Key: b(genKey.Draw(t, "key")), Value: b(genValue.Draw(t, "value")),
			Lease: genLease.Draw(t, "lease"), PrevKv: rapid.Bool().Draw(t, "prev")}
		switch rapid.IntRange(0, 9).Draw(t, "ignore") {
		case 0:
			r.IgnoreValue, r.Value = true, nil
		case 1:
			r.IgnoreLease, r.Lease = true, 0
		case 2:
			r.IgnoreValue = true // with a value: refused
		}
		return r
	})
}

func genDelete() *rapid.Generator[*DeleteRangeRequest] {
	return rapid.Custom(func(t *rapid.T) *DeleteRangeRequest {
		return &DeleteRangeRequest{Key: b(genKey.Draw(t, "key")), RangeEnd: b(genEnd.Draw(t, "end")),
			PrevKv: rapid.Bool().Draw(t, "prev")}
	})
}

// genRange asks for revisions up to maxRev, beyond the current one at times.
func genRange(maxRev int64) *rapid.Generator[*RangeRequest] {
	return rapid.Custom(func(t *rapid.T) *RangeRequest {
		r := &RangeRequest{Key: b(genKey.Draw(t, "key")), RangeEnd: b(genEnd.Draw(t, "end")),
			Limit: rapid.Int64Range(0, 3).Draw(t, "limit")}
		if rapid.IntRange(0, 3).Draw(t, "historic") == 0 {
			r.Revision = rapid.Int64Range(-2, maxRev).Draw(t, "rev")
		}
		if rapid.Bool().Draw(t, "sorted") {
			r.SortOrder = SortOrder(rapid.IntRange(0, 2).Draw(t, "order"))
			r.SortTarget = SortTarget(rapid.IntRange(0, 4).Draw(t, "target"))
		}
		r.KeysOnly = rapid.IntRange(0, 4).Draw(t, "keysOnly") == 0
		r.CountOnly = rapid.IntRange(0, 4).Draw(t, "countOnly") == 0
		bound := func(name string) int64 {
			if rapid.IntRange(0, 4).Draw(t, name) != 0 {
				return 0
			}
			return rapid.Int64Range(1, maxRev).Draw(t, name+"Rev")
		}
		r.MinModRevision, r.MaxModRevision = bound("minMod"), bound("maxMod")
		r.MinCreateRevision, r.MaxCreateRevision = bound("minCreate"), bound("maxCreate")
		return r
	})
}

func genCompare(maxRev int64) *rapid.Generator[*Compare] {
	return rapid.Custom(func(t *rapid.T) *Compare {
		c := &Compare{Key: b(genKey.Draw(t, "key")), Result: CompareResult(rapid.IntRange(0, 3).Draw(t, "result")),
			Target: CompareTarget(rapid.IntRange(0, 4).Draw(t, "target"))}
		if rapid.IntRange(0, 3).Draw(t, "ranged") == 0 {
			c.RangeEnd = b(genEnd.Draw(t, "end"))
		}
		switch c.Target {
		case CompareVersion:
			c.Version = rapid.Int64Range(0, 3).Draw(t, "version")
		case CompareCreate:
			c.CreateRevision = rapid.Int64Range(0, maxRev).Draw(t, "create")
		case CompareMod:
			c.ModRevision = rapid.Int64Range(0, maxRev).Draw(t, "mod")
		case CompareValue:
			c.Value = b(genValue.Draw(t, "value"))
		case CompareLease:
			c.Lease = genLease.Draw(t, "lease")
		}
		return c
	})
}

// genTxn makes txns of up to three compares and ops per branch, nested up
// to depth more levels.
func genTxn(maxRev int64, depth int) *rapid.Generator[*TxnRequest] {
	return rapid.Custom(func(t *rapid.T) *TxnRequest {
		ops := func(name string) []*RequestOp {
			return rapid.SliceOfN(genOp(maxRev, depth), 0, 3).Draw(t, name)
		}
		return &TxnRequest{Compare: rapid.SliceOfN(genCompare(maxRev), 0, 2).Draw(t, "compare"),
			Success: ops("success"), Failure: ops("failure")}
	})
}

func genOp(maxRev int64, depth int) *rapid.Generator[*RequestOp] {
	return rapid.Custom(func(t *rapid.T) *RequestOp {
		kinds := 3
		if depth > 0 {
			kinds = 4
		}
		switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
		case 0:
			return &RequestOp{RequestRange: genRange(maxRev).Draw(t, "range")}
		case 1:
			return &RequestOp{RequestPut: genPut().Draw(t, "put")}
		case 2:
			return &RequestOp{RequestDeleteRange: genDelete().Draw(t, "delete")}
		}
		return &RequestOp{RequestTxn: genTxn(maxRev, depth-1).Draw(t, "txn")}
	})
}
