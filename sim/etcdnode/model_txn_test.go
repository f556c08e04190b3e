package etcdnode

import "bytes"

// The model's txn: compares read at the revision before the txn (writes go
// to the next one, so reading at the old revision ignores them), checks
// first, then the ops in order; all or nothing.

func (m *model) Txn(r *TxnRequest) (*TxnResponse, error) {
	if err := modelCheckShape(r, 128); err != nil {
		return nil, err
	}
	if _, _, dup := modelIntervals(r.Success); dup {
		return nil, ErrDuplicateKey
	}
	if _, _, dup := modelIntervals(r.Failure); dup {
		return nil, ErrDuplicateKey
	}
	if err := m.checkBranch(r); err != nil {
		return nil, err
	}
	histLen := len(m.hist)
	w := &mWrite{m: m}
	resp, err := w.txn(r)
	if err != nil {
		m.hist = m.hist[:histLen]
		return nil, err
	}
	rev := w.readRev()
	w.commit()
	resp.Header = m.header(rev)
	return resp, nil
}

func (m *model) holds(cmps []*Compare) bool {
	for _, c := range cmps {
		kvs := m.liveRange(c.Key, c.RangeEnd, m.rev)
		if len(kvs) == 0 {
			if c.Target == CompareValue {
				return false
			}
			kvs = []KeyValue{{}}
		}
		for _, kv := range kvs {
			if !modelCompare(c, kv) {
				return false
			}
		}
	}
	return true
}

func modelCompare(c *Compare, kv KeyValue) bool {
	var d int
	switch c.Target {
	case CompareVersion:
		d = cmpInt64(kv.Version, c.Version)
	case CompareCreate:
		d = cmpInt64(kv.CreateRevision, c.CreateRevision)
	case CompareMod:
		d = cmpInt64(kv.ModRevision, c.ModRevision)
	case CompareValue:
		d = bytes.Compare(kv.Value, c.Value)
	case CompareLease:
		d = cmpInt64(kv.Lease, c.Lease)
	}
	return []bool{d == 0, d > 0, d < 0, d != 0}[c.Result]
}

func (m *model) chosen(r *TxnRequest) ([]*RequestOp, bool) {
	if m.holds(r.Compare) {
		return r.Success, true
	}
	return r.Failure, false
}

// checkBranch is etcd's checkTxn over the branches that will run.
func (m *model) checkBranch(r *TxnRequest) error {
	ops, _ := m.chosen(r)
	for _, op := range ops {
		var err error
		switch {
		case op.RequestRange != nil && op.RequestRange.Revision > m.rev:
			err = ErrFutureRev
		case op.RequestRange != nil && op.RequestRange.Revision < -1:
			err = ErrCompacted // below the last compaction, -1 when there was none
		case op.RequestPut != nil:
			p := op.RequestPut
			if _, ok := m.live(p.Key, m.rev); (p.IgnoreValue || p.IgnoreLease) && !ok {
				err = ErrKeyNotFound
			} else if _, ok := m.leases[p.Lease]; p.Lease != 0 && !ok {
				err = ErrLeaseNotFound
			}
		case op.RequestTxn != nil:
			err = m.checkBranch(op.RequestTxn)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *mWrite) txn(r *TxnRequest) (*TxnResponse, error) {
	ops, ok := w.m.chosen(r)
	resp := &TxnResponse{Header: &ResponseHeader{}, Succeeded: ok, Responses: []*ResponseOp{}}
	for _, op := range ops {
		out := &ResponseOp{}
		var err error
		switch {
		case op.RequestRange != nil:
			out.ResponseRange, err = w.m.rangeAt(op.RequestRange, w.readRev())
		case op.RequestPut != nil:
			p := op.RequestPut
			if _, live := w.m.live(p.Key, w.readRev()); (p.IgnoreValue || p.IgnoreLease) && !live {
				return nil, &Error{CodeUnknown, "applyTxn: failed Put: " + ErrKeyNotFound.Msg}
			}
			out.ResponsePut = w.putOp(p)
		case op.RequestDeleteRange != nil:
			out.ResponseDeleteRange = w.delOp(op.RequestDeleteRange)
		case op.RequestTxn != nil:
			out.ResponseTxn, err = w.txn(op.RequestTxn)
		}
		if err != nil {
			return nil, err
		}
		resp.Responses = append(resp.Responses, out)
	}
	return resp, nil
}

// modelCheckShape is v3rpc's checkTxnRequest, stated directly.
func modelCheckShape(r *TxnRequest, maxOps int) error {
	opc := max(len(r.Compare), len(r.Success), len(r.Failure))
	if opc > maxOps {
		return ErrTooManyOps
	}
	for _, c := range r.Compare {
		if len(c.Key) == 0 {
			return ErrEmptyKey
		}
	}
	for _, op := range append(append([]*RequestOp{}, r.Success...), r.Failure...) {
		var err error
		switch {
		case op.RequestRange != nil:
			if len(op.RequestRange.Key) == 0 {
				err = ErrEmptyKey
			} else if op.RequestRange.SortOrder > SortDescend || op.RequestRange.SortTarget > SortByValue {
				err = ErrInvalidSortOption
			}
		case op.RequestPut != nil:
			err = modelCheckPut(op.RequestPut)
		case op.RequestDeleteRange != nil:
			if len(op.RequestDeleteRange.Key) == 0 {
				err = ErrEmptyKey
			}
		case op.RequestTxn != nil:
			err = modelCheckShape(op.RequestTxn, maxOps-opc)
		default:
			err = ErrKeyNotFound
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// modelIntervals is v3rpc's checkIntervals over plain lists: this level's
// deletes first; then each nested txn's puts (then and else may share a
// key) against the puts and deletes met so far, its deletes joining after;
// then this level's puts against everything.
func modelIntervals(ops []*RequestOp) (puts []string, dels [][2]string, dup bool) {
	covered := func(k string) bool {
		for _, d := range dels {
			if d[0] <= k && (d[1] == "" || k < d[1]) {
				return true
			}
		}
		return false
	}
	has := func(list []string, k string) bool {
		for _, p := range list {
			if p == k {
				return true
			}
		}
		return false
	}
	for _, op := range ops {
		if d := op.RequestDeleteRange; d != nil {
			end := string(d.RangeEnd)
			if end == "" {
				end = string(d.Key) + "\x00"
			}
			dels = append(dels, [2]string{string(d.Key), end})
		}
	}
	for _, op := range ops {
		if op.RequestTxn == nil {
			continue
		}
		thenPuts, thenDels, dup1 := modelIntervals(op.RequestTxn.Success)
		elsePuts, elseDels, dup2 := modelIntervals(op.RequestTxn.Failure)
		if dup1 || dup2 {
			return nil, nil, true
		}
		for _, k := range thenPuts {
			if has(puts, k) || covered(k) {
				return nil, nil, true
			}
		}
		for _, k := range elsePuts {
			if has(puts, k) && !has(thenPuts, k) || covered(k) {
				return nil, nil, true
			}
		}
		puts = append(append(puts, thenPuts...), elsePuts...)
		dels = append(append(dels, thenDels...), elseDels...)
	}
	for _, op := range ops {
		if p := op.RequestPut; p != nil {
			if has(puts, string(p.Key)) || covered(string(p.Key)) {
				return nil, nil, true
			}
			puts = append(puts, string(p.Key))
		}
	}
	return puts, dels, false
}
