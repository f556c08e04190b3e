package etcdnode

import (
	"bytes"
	"maps"
	"slices"
)

// Txn runs a transaction (etcd's KV.Txn): the compares, of this txn and of
// the nested txns on the chosen branches, are all read from the store as it
// was before the txn; the chosen ops run in order, each read seeing the
// writes before it; all writes share one new revision, which exists only if
// something changed. It records the watch deliveries it causes.
func (m *Member) Txn(now int64, r *TxnRequest) (*TxnResponse, error) {
	if err := checkTxnRequest(r, m.opts.MaxTxnOps); err != nil {
		return nil, err
	}
	for _, ops := range [][]*RequestOp{r.Success, r.Failure} {
		if _, _, err := checkIntervals(ops); err != nil {
			return nil, err
		}
	}
	path := m.compareToPath(r, m.store.rev)
	checked := slices.Clone(path)
	if err := m.checkTxn(r, &checked); err != nil {
		return nil, err
	}
	w := m.beginWrite()
	resp, err := w.executeTxn(r, &path)
	if err != nil {
		w.rollback()
		m.note("txn failed after its checks")
		return nil, &Error{CodeUnknown, err.Error()}
	}
	rev := w.readRev()
	w.end()
	resp.Header = m.header(rev)
	return resp, nil
}

// txnPath is the outcome of every compare the txn will run, in the order the
// txn meets them (txn.go compareToPath), consumed as it goes.
type txnPath []bool

func (p *txnPath) next() bool {
	ok := (*p)[0]
	*p = (*p)[1:]
	return ok
}

// compareToPath evaluates r's compares, and its chosen branch's nested txns',
// at revision rev.
func (m *Member) compareToPath(r *TxnRequest, rev int64) txnPath {
	ok := m.applyCompares(r.Compare, rev)
	path := txnPath{ok}
	for _, op := range branch(r, ok) {
		if op != nil && op.RequestTxn != nil && op.only() {
			path = append(path, m.compareToPath(op.RequestTxn, rev)...)
		}
	}
	return path
}

func branch(r *TxnRequest, succeeded bool) []*RequestOp {
	if succeeded {
		return r.Success
	}
	return r.Failure
}

// only says the op holds exactly one request, the one a pb oneof can.
func (op *RequestOp) only() bool {
	n := 0
	for _, set := range []bool{op.RequestRange != nil, op.RequestPut != nil, op.RequestDeleteRange != nil, op.RequestTxn != nil} {
		if set {
			n++
		}
	}
	return n == 1
}

// checkTxn is txn.go's: before anything runs, a range must ask for a
// revision the store has, and a put's lease must exist, and so must its key if it
// keeps the key's value or lease — all judged on the store before the txn.
func (m *Member) checkTxn(r *TxnRequest, path *txnPath) error {
	for _, op := range branch(r, path.next()) {
		var err error
		switch {
		case op.RequestRange != nil:
			err = m.checkRange(op.RequestRange)
		case op.RequestPut != nil:
			err = m.checkPut(op.RequestPut)
		case op.RequestTxn != nil:
			err = m.checkTxn(op.RequestTxn, path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRange is txn.go's: a revision above the store's is in the future,
// one below the last compaction (-1 in a store never compacted) is gone.
// Only txns check the latter: a plain Range reads any revision ≤ 0 as now.
func (m *Member) checkRange(r *RangeRequest) error {
	switch {
	case r.Revision > m.store.rev:
		return ErrFutureRev
	case r.Revision != 0 && r.Revision < neverCompacted:
		return ErrCompacted
	}
	return nil
}

// neverCompacted is etcd's compactMainRev before any compaction.
const neverCompacted = -1

func (m *Member) checkPut(r *PutRequest) error {
	if r.IgnoreValue || r.IgnoreLease {
		if _, ok := m.store.get(r.Key, m.store.rev); !ok {
			return ErrKeyNotFound
		}
	}
	if r.Lease != 0 && m.leases[r.Lease] == nil {
		return ErrLeaseNotFound
	}
	return nil
}

// executeTxn runs the chosen branch (txn.go newTxnResp + executeTxn). The
// responses' headers hold only their revision, and a nested txn's is empty,
// as etcd leaves them.
func (w *txnWrite) executeTxn(r *TxnRequest, path *txnPath) (*TxnResponse, error) {
	ok := path.next()
	ops := branch(r, ok)
	resp := &TxnResponse{Header: &ResponseHeader{}, Succeeded: ok, Responses: make([]*ResponseOp, len(ops))}
	for i, op := range ops {
		out := &ResponseOp{}
		var err error
		switch {
		case op.RequestRange != nil:
			out.ResponseRange, err = w.m.executeRange(op.RequestRange, w.readRev())
		case op.RequestPut != nil:
			out.ResponsePut, err = w.putOp(op.RequestPut)
			if err != nil {
				err = &Error{CodeUnknown, "applyTxn: failed Put: " + err.Error()}
			}
		case op.RequestDeleteRange != nil:
			out.ResponseDeleteRange = w.deleteRangeOp(op.RequestDeleteRange)
		case op.RequestTxn != nil:
			out.ResponseTxn, err = w.executeTxn(op.RequestTxn, path)
		}
		if err != nil {
			return nil, err
		}
		resp.Responses[i] = out
	}
	return resp, nil
}

// applyCompares is true if every compare holds at revision rev.
func (m *Member) applyCompares(cmps []*Compare, rev int64) bool {
	for _, c := range cmps {
		if !m.applyCompare(c, rev) {
			return false
		}
	}
	return true
}

// applyCompare holds if it holds for every key in its range. With no key
// there, it is judged against a zero KeyValue, except that a VALUE compare
// then fails: a missing value cannot be told from an empty one.
func (m *Member) applyCompare(c *Compare, rev int64) bool {
	kvs := m.store.rangeAt(newKeyRange(c.Key, c.RangeEnd), rev)
	if len(kvs) == 0 {
		return c.Target != CompareValue && compareKV(c, KeyValue{})
	}
	for _, kv := range kvs {
		if !compareKV(c, kv) {
			return false
		}
	}
	return true
}

func compareKV(c *Compare, kv KeyValue) bool {
	var result int
	switch c.Target {
	case CompareValue:
		result = bytes.Compare(kv.Value, c.Value)
	case CompareCreate:
		result = cmpInt64(kv.CreateRevision, c.CreateRevision)
	case CompareMod:
		result = cmpInt64(kv.ModRevision, c.ModRevision)
	case CompareVersion:
		result = cmpInt64(kv.Version, c.Version)
	case CompareLease:
		result = cmpInt64(kv.Lease, c.Lease)
	}
	switch c.Result {
	case CompareEqual:
		return result == 0
	case CompareNotEqual:
		return result != 0
	case CompareGreater:
		return result > 0
	case CompareLess:
		return result < 0
	}
	return true
}

// checkTxnRequest is v3rpc's: no more than maxOps compares or ops per
// branch (a nested txn gets what its parent left), keys given, every op
// well formed.
func checkTxnRequest(r *TxnRequest, maxOps int) error {
	opc := max(len(r.Compare), len(r.Success), len(r.Failure))
	if opc > maxOps {
		return ErrTooManyOps
	}
	for _, c := range r.Compare {
		if len(c.Key) == 0 {
			return ErrEmptyKey
		}
	}
	for _, op := range slices.Concat(r.Success, r.Failure) {
		if err := checkRequestOp(op, maxOps-opc); err != nil {
			return err
		}
	}
	return nil
}

// errSeveralRequests answers a RequestOp no pb message can be.
var errSeveralRequests = &Error{CodeInvalidArgument, "etcdnode: RequestOp with more than one request set"}

func checkRequestOp(op *RequestOp, maxOps int) error {
	switch {
	case op == nil || op.RequestRange == nil && op.RequestPut == nil && op.RequestDeleteRange == nil && op.RequestTxn == nil:
		return ErrKeyNotFound // etcd's answer to an empty union
	case !op.only():
		return errSeveralRequests
	case op.RequestRange != nil:
		return checkRangeRequest(op.RequestRange)
	case op.RequestPut != nil:
		return checkPutRequest(op.RequestPut)
	case op.RequestDeleteRange != nil:
		if len(op.RequestDeleteRange.Key) == 0 {
			return ErrEmptyKey
		}
		return nil
	}
	return checkTxnRequest(op.RequestTxn, maxOps)
}

// interval is a deleted range as v3rpc's checkIntervals sees it: [begin,
// end) with RangeEnd taken literally, "" above every key. So a delete ending
// in "\x00" (every key ≥ begin) overlaps no put there, as in etcd.
type interval struct{ begin, end string }

func (iv interval) has(k string) bool { return iv.begin <= k && (iv.end == "" || k < iv.end) }

func deleted(dels []interval, k string) bool {
	return slices.ContainsFunc(dels, func(iv interval) bool { return iv.has(k) })
}

// checkIntervals is v3rpc's: within one txn, no key may be put twice, nor
// put and deleted; a nested txn's then and else branches may put the same
// key, since only one of them runs.
func checkIntervals(ops []*RequestOp) (map[string]bool, []interval, error) {
	var dels []interval
	for _, op := range ops {
		if d := op.RequestDeleteRange; d != nil {
			end := string(d.Key) + "\x00" // a single key
			if len(d.RangeEnd) != 0 {
				end = string(d.RangeEnd)
			}
			dels = append(dels, interval{string(d.Key), end})
		}
	}
	puts := map[string]bool{}
	for _, op := range ops {
		if op.RequestTxn == nil {
			continue
		}
		putsThen, delsThen, err := checkIntervals(op.RequestTxn.Success)
		if err != nil {
			return nil, nil, err
		}
		putsElse, delsElse, err := checkIntervals(op.RequestTxn.Failure)
		if err != nil {
			return nil, nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(putsThen)) {
			if puts[k] || deleted(dels, k) {
				return nil, nil, ErrDuplicateKey
			}
			puts[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(putsElse)) {
			if puts[k] && !putsThen[k] || deleted(dels, k) {
				return nil, nil, ErrDuplicateKey
			}
			puts[k] = true
		}
		dels = slices.Concat(dels, delsThen, delsElse)
	}
	for _, op := range ops {
		if p := op.RequestPut; p != nil {
			if puts[string(p.Key)] || deleted(dels, string(p.Key)) {
				return nil, nil, ErrDuplicateKey
			}
			puts[string(p.Key)] = true
		}
	}
	return puts, dels, nil
}
