package etcdnode

import (
	"bytes"
	"sort"
)

// Range reads keys (etcd's KV.Range). now is unused: etcd's KV never reads a
// clock, and expired leases' keys stay readable until revoked. The member is
// alone, so a serializable read is a linearizable one.
func (m *Member) Range(now int64, r *RangeRequest) (*RangeResponse, error) {
	if err := checkRangeRequest(r); err != nil {
		return nil, err
	}
	resp, err := m.executeRange(r, m.store.rev)
	if err != nil {
		return nil, err
	}
	resp.Header = m.fill(resp.Header)
	return resp, nil
}

// Put writes one key (etcd's KV.Put) and records the watch deliveries it causes.
func (m *Member) Put(now int64, r *PutRequest) (*PutResponse, error) {
	if err := checkPutRequest(r); err != nil {
		return nil, err
	}
	if r.Lease != 0 && m.leases[r.Lease] == nil {
		return nil, ErrLeaseNotFound
	}
	w := m.beginWrite()
	resp, err := w.putOp(r)
	if err != nil {
		return nil, err // nothing was written
	}
	w.end()
	resp.Header = m.fill(resp.Header)
	return resp, nil
}

// DeleteRange deletes keys (etcd's KV.DeleteRange) and records the watch
// deliveries it causes; the revision moves only if a key was deleted.
func (m *Member) DeleteRange(now int64, r *DeleteRangeRequest) (*DeleteRangeResponse, error) {
	if len(r.Key) == 0 {
		return nil, ErrEmptyKey
	}
	w := m.beginWrite()
	resp := w.deleteRangeOp(r)
	w.end()
	resp.Header = m.fill(resp.Header)
	return resp, nil
}

// checkRangeRequest is v3rpc's: a key, and sort options etcd knows.
func checkRangeRequest(r *RangeRequest) error {
	switch {
	case len(r.Key) == 0:
		return ErrEmptyKey
	case r.SortOrder < SortNone || r.SortOrder > SortDescend, r.SortTarget < SortByKey || r.SortTarget > SortByValue:
		return ErrInvalidSortOption
	}
	return nil
}

// checkPutRequest is v3rpc's.
func checkPutRequest(r *PutRequest) error {
	switch {
	case len(r.Key) == 0:
		return ErrEmptyKey
	case r.IgnoreValue && len(r.Value) != 0:
		return ErrValueProvided
	case r.IgnoreLease && r.Lease != 0:
		return ErrLeaseProvided
	}
	return nil
}

// putOp is txn.go's put: the lease was checked, the key may have to exist.
// The header holds only the revision.
func (w *txnWrite) putOp(r *PutRequest) (*PutResponse, error) {
	resp := &PutResponse{Header: &ResponseHeader{}}
	prev, exists := w.m.store.get(r.Key, w.readRev())
	if (r.IgnoreValue || r.IgnoreLease) && !exists {
		return nil, ErrKeyNotFound
	}
	value, leaseID := r.Value, r.Lease
	if r.IgnoreValue {
		value = prev.Value
	}
	if r.IgnoreLease {
		leaseID = prev.Lease
	}
	if r.PrevKv && exists {
		resp.PrevKv = cloneKV(prev)
	}
	resp.Header.Revision = w.put(r.Key, value, leaseID)
	return resp, nil
}

// deleteRangeOp is txn.go's deleteRange; the header holds only the revision.
func (w *txnWrite) deleteRangeOp(r *DeleteRangeRequest) *DeleteRangeResponse {
	resp := &DeleteRangeResponse{Header: &ResponseHeader{}}
	kr := newKeyRange(r.Key, r.RangeEnd)
	if r.PrevKv {
		resp.PrevKvs = clonedKVs(w.m.store.rangeAt(kr, w.readRev()), false)
	}
	resp.Deleted, resp.Header.Revision = w.deleteRange(kr)
	return resp
}

// executeRange is txn.go's executeRange at store revision curRev: fetch the
// whole range in key order, filter, sort, then cut at Limit. Count is the
// range's size before filters and limit. The header holds only the revision.
func (m *Member) executeRange(r *RangeRequest, curRev int64) (*RangeResponse, error) {
	if r.Revision > curRev {
		return nil, ErrFutureRev
	}
	rev := r.Revision
	if rev <= 0 {
		rev = curRev
	}
	kvs := m.store.rangeAt(newKeyRange(r.Key, r.RangeEnd), rev)
	count := int64(len(kvs))
	if r.CountOnly {
		kvs = nil
	}
	kvs = pruneKVs(kvs, r)
	sortKVs(kvs, r.SortOrder, r.SortTarget)
	resp := &RangeResponse{Header: &ResponseHeader{Revision: curRev}, Count: count}
	if r.Limit > 0 && int64(len(kvs)) > r.Limit {
		kvs, resp.More = kvs[:r.Limit], true
	}
	resp.Kvs = clonedKVs(kvs, r.KeysOnly)
	return resp, nil
}

// pruneKVs drops what the min/max revision filters exclude (0: no bound).
func pruneKVs(kvs []KeyValue, r *RangeRequest) []KeyValue {
	out := kvs[:0]
	for _, kv := range kvs {
		switch {
		case r.MaxModRevision != 0 && kv.ModRevision > r.MaxModRevision,
			r.MinModRevision != 0 && kv.ModRevision < r.MinModRevision,
			r.MaxCreateRevision != 0 && kv.CreateRevision > r.MaxCreateRevision,
			r.MinCreateRevision != 0 && kv.CreateRevision < r.MinCreateRevision:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// clonedKVs is the response's list (never nil, as etcd's make), without
// values for KeysOnly.
func clonedKVs(kvs []KeyValue, keysOnly bool) []*KeyValue {
	out := make([]*KeyValue, len(kvs))
	for i, kv := range kvs {
		if keysOnly {
			kv.Value = nil
		}
		out[i] = cloneKV(kv)
	}
	return out
}

// sortKVs is etcd's: a target other than KEY with no order sorts ascending,
// KEY ascending is the fetch order already. sort.Sort is not stable, and
// keys written by one txn share their revisions, so ties come out as etcd's
// only because this is the same algorithm over the same Less, Swap and
// starting order (txn.go kvSort*).
func sortKVs(kvs []KeyValue, order SortOrder, target SortTarget) {
	if target != SortByKey && order == SortNone {
		order = SortAscend
	} else if target == SortByKey && order == SortAscend {
		order = SortNone
	}
	if order == SortNone {
		return
	}
	var s sort.Interface = kvSort{kvs, target}
	if order == SortDescend {
		s = sort.Reverse(s)
	}
	sort.Sort(s)
}

type kvSort struct {
	kvs    []KeyValue
	target SortTarget
}

func (s kvSort) Len() int      { return len(s.kvs) }
func (s kvSort) Swap(i, j int) { s.kvs[i], s.kvs[j] = s.kvs[j], s.kvs[i] }

func (s kvSort) Less(i, j int) bool {
	a, b := &s.kvs[i], &s.kvs[j]
	switch s.target {
	case SortByVersion:
		return a.Version-b.Version < 0
	case SortByCreate:
		return a.CreateRevision-b.CreateRevision < 0
	case SortByMod:
		return a.ModRevision-b.ModRevision < 0
	case SortByValue:
		return bytes.Compare(a.Value, b.Value) < 0
	}
	return bytes.Compare(a.Key, b.Key) < 0
}
