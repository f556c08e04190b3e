package etcdnode

import (
	"bytes"
	"slices"
	"sort"
	"time"
)

// model is the plain specification the member is checked against: a list
// of every version ever written, searched by brute force. Which keys a lease
// holds is not kept: it is read off the live values.
type model struct {
	rev      int64
	hist     []mVersion // in write order
	leases   map[int64]*mLease
	leaseSeq uint64
	term     uint64
	watching uint64                    // the stream of the open watch on everything, with prev values; 0: none
	waiting  []*LeaseKeepAliveResponse // keep-alives (stream 2) of expired leases
	outbox   []Delivery
}

type mVersion struct {
	kv      KeyValue
	deleted bool
}

type mLease struct{ ttl, expiry int64 }

func newModel() *model { return &model{rev: 1, leases: map[int64]*mLease{}, term: 2} }

func (m *model) header(rev int64) *ResponseHeader {
	return &ResponseHeader{ClusterId: ClusterID, MemberId: MemberID, Revision: rev, RaftTerm: m.term}
}

// live is key's value at revision rev: the last version written at or before it.
func (m *model) live(key []byte, rev int64) (KeyValue, bool) {
	for i := len(m.hist) - 1; i >= 0; i-- {
		if v := m.hist[i]; bytes.Equal(v.kv.Key, key) && v.kv.ModRevision <= rev {
			return v.kv, !v.deleted
		}
	}
	return KeyValue{}, false
}

func inRange(k, key, end []byte) bool {
	switch {
	case len(end) == 0:
		return bytes.Equal(k, key)
	case len(end) == 1 && end[0] == 0:
		return bytes.Compare(k, key) >= 0
	}
	return bytes.Compare(k, key) >= 0 && bytes.Compare(k, end) < 0
}

// liveRange is every key in [key, end) live at rev, in key order.
func (m *model) liveRange(key, end []byte, rev int64) []KeyValue {
	var names []string
	for _, v := range m.hist {
		if inRange(v.kv.Key, key, end) && !slices.Contains(names, string(v.kv.Key)) {
			names = append(names, string(v.kv.Key))
		}
	}
	slices.Sort(names)
	var out []KeyValue
	for _, k := range names {
		if kv, ok := m.live([]byte(k), rev); ok {
			out = append(out, kv)
		}
	}
	return out
}

func (m *model) leaseKeys(id int64) []string {
	var keys []string
	for _, kv := range m.liveRange([]byte{0}, []byte{0}, m.rev) {
		if kv.Lease == id {
			keys = append(keys, string(kv.Key))
		}
	}
	return keys
}

// mWrite is a request's writes, all at revision rev+1.
type mWrite struct {
	m     *model
	wrote bool
}

func (w *mWrite) readRev() int64 {
	if w.wrote {
		return w.m.rev + 1
	}
	return w.m.rev
}

func (w *mWrite) put(key, value []byte, leaseID int64) {
	next := w.m.rev + 1
	kv := KeyValue{Key: key, Value: value, CreateRevision: next, ModRevision: next, Version: 1, Lease: leaseID}
	if prev, ok := w.m.live(key, next); ok {
		kv.CreateRevision, kv.Version = prev.CreateRevision, prev.Version+1
	}
	w.m.hist = append(w.m.hist, mVersion{kv: kv})
	w.wrote = true
}

func (w *mWrite) del(key, end []byte) int64 {
	kvs := w.m.liveRange(key, end, w.readRev())
	for _, kv := range kvs {
		w.m.hist = append(w.m.hist, mVersion{kv: KeyValue{Key: kv.Key, ModRevision: w.m.rev + 1}, deleted: true})
		w.wrote = true
	}
	return int64(len(kvs))
}

// commit moves the revision if anything was written and tells the watch.
func (w *mWrite) commit() {
	if !w.wrote {
		return
	}
	w.m.rev++
	if w.m.watching == 0 {
		return
	}
	var evs []*Event
	for _, v := range w.m.hist {
		if v.kv.ModRevision == w.m.rev {
			evs = append(evs, w.m.event(v))
		}
	}
	w.m.outbox = append(w.m.outbox, Delivery{Stream: w.m.watching, Watch: &WatchResponse{Header: w.m.header(w.m.rev), Events: evs}})
}

// event is v as a watch with previous values shows it.
func (m *model) event(v mVersion) *Event {
	ev := &Event{Type: EventPut, Kv: cloneKV(v.kv)}
	if v.deleted {
		ev.Type = EventDelete
	}
	if v.deleted || v.kv.Version > 1 {
		if prev, ok := m.live(v.kv.Key, v.kv.ModRevision-1); ok {
			ev.PrevKv = cloneKV(prev)
		}
	}
	return ev
}

func (m *model) Range(r *RangeRequest) (*RangeResponse, error) {
	if len(r.Key) == 0 {
		return nil, ErrEmptyKey
	}
	if r.SortOrder > SortDescend || r.SortTarget > SortByValue {
		return nil, ErrInvalidSortOption
	}
	resp, err := m.rangeAt(r, m.rev)
	if err == nil {
		resp.Header = m.header(resp.Header.Revision)
	}
	return resp, err
}

func (m *model) rangeAt(r *RangeRequest, cur int64) (*RangeResponse, error) {
	if r.Revision > cur {
		return nil, ErrFutureRev
	}
	at := cur
	if r.Revision > 0 {
		at = r.Revision
	}
	all := m.liveRange(r.Key, r.RangeEnd, at)
	resp := &RangeResponse{Header: &ResponseHeader{Revision: cur}, Count: int64(len(all)), Kvs: []*KeyValue{}}
	if r.CountOnly {
		return resp, nil
	}
	var kept []KeyValue
	for _, kv := range all {
		if within(kv.ModRevision, r.MinModRevision, r.MaxModRevision) && within(kv.CreateRevision, r.MinCreateRevision, r.MaxCreateRevision) {
			kept = append(kept, kv)
		}
	}
	modelSort(kept, r.SortOrder, r.SortTarget)
	for i, kv := range kept {
		if r.Limit > 0 && int64(i) == r.Limit {
			resp.More = true
			break
		}
		if r.KeysOnly {
			kv.Value = nil
		}
		resp.Kvs = append(resp.Kvs, cloneKV(kv))
	}
	return resp, nil
}

func within(v, lo, hi int64) bool { return (lo == 0 || v >= lo) && (hi == 0 || v <= hi) }

// modelSort is etcd's rule, stated plainly; ties are etcd's sort.Sort's, so
// the spec is that call.
func modelSort(kvs []KeyValue, order SortOrder, target SortTarget) {
	if order == SortNone && target == SortByKey || order == SortAscend && target == SortByKey {
		return
	}
	key := func(kv KeyValue) []byte {
		switch target {
		case SortByVersion:
			return bigEndian(kv.Version)
		case SortByCreate:
			return bigEndian(kv.CreateRevision)
		case SortByMod:
			return bigEndian(kv.ModRevision)
		case SortByValue:
			return kv.Value
		}
		return kv.Key
	}
	less := func(i, j int) bool { return bytes.Compare(key(kvs[i]), key(kvs[j])) < 0 }
	if order == SortDescend {
		sort.Sort(sort.Reverse(lessSwap{len(kvs), less, func(i, j int) { kvs[i], kvs[j] = kvs[j], kvs[i] }}))
		return
	}
	sort.Sort(lessSwap{len(kvs), less, func(i, j int) { kvs[i], kvs[j] = kvs[j], kvs[i] }})
}

// bigEndian orders non-negative numbers as bytes.
func bigEndian(v int64) []byte {
	out := make([]byte, 8)
	for i := range 8 {
		out[7-i] = byte(v >> (8 * i))
	}
	return out
}

type lessSwap struct {
	n    int
	less func(i, j int) bool
	swap func(i, j int)
}

func (s lessSwap) Len() int           { return s.n }
func (s lessSwap) Less(i, j int) bool { return s.less(i, j) }
func (s lessSwap) Swap(i, j int)      { s.swap(i, j) }

func (m *model) Put(r *PutRequest) (*PutResponse, error) {
	if err := modelCheckPut(r); err != nil {
		return nil, err
	}
	if err := m.checkPut(r, m.rev); err != nil {
		return nil, err
	}
	w := &mWrite{m: m}
	resp := w.putOp(r)
	w.commit()
	resp.Header = m.header(resp.Header.Revision)
	return resp, nil
}

func modelCheckPut(r *PutRequest) error {
	switch {
	case len(r.Key) == 0:
		return ErrEmptyKey
	case r.IgnoreValue && len(r.Value) > 0:
		return ErrValueProvided
	case r.IgnoreLease && r.Lease != 0:
		return ErrLeaseProvided
	}
	return nil
}

// checkPut is the apply-time check (lease first at the top level, as etcd;
// inside a txn the key check comes first, which the generated cases never
// tell apart).
func (m *model) checkPut(r *PutRequest, rev int64) error {
	if _, ok := m.leases[r.Lease]; r.Lease != 0 && !ok {
		return ErrLeaseNotFound
	}
	if _, ok := m.live(r.Key, rev); (r.IgnoreValue || r.IgnoreLease) && !ok {
		return ErrKeyNotFound
	}
	return nil
}

func (w *mWrite) putOp(r *PutRequest) *PutResponse {
	resp := &PutResponse{Header: &ResponseHeader{}}
	prev, ok := w.m.live(r.Key, w.readRev())
	value, leaseID := r.Value, r.Lease
	if r.IgnoreValue {
		value = prev.Value
	}
	if r.IgnoreLease {
		leaseID = prev.Lease
	}
	if r.PrevKv && ok {
		resp.PrevKv = cloneKV(prev)
	}
	w.put(bytes.Clone(r.Key), bytes.Clone(value), leaseID)
	resp.Header.Revision = w.m.rev + 1
	return resp
}

func (m *model) DeleteRange(r *DeleteRangeRequest) (*DeleteRangeResponse, error) {
	if len(r.Key) == 0 {
		return nil, ErrEmptyKey
	}
	w := &mWrite{m: m}
	resp := w.delOp(r)
	w.commit()
	resp.Header = m.header(resp.Header.Revision)
	return resp, nil
}

func (w *mWrite) delOp(r *DeleteRangeRequest) *DeleteRangeResponse {
	resp := &DeleteRangeResponse{Header: &ResponseHeader{}}
	if r.PrevKv {
		resp.PrevKvs = []*KeyValue{}
		for _, kv := range w.m.liveRange(r.Key, r.RangeEnd, w.readRev()) {
			resp.PrevKvs = append(resp.PrevKvs, cloneKV(kv))
		}
	}
	resp.Deleted = w.del(r.Key, r.RangeEnd)
	resp.Header.Revision = w.readRev()
	return resp
}

func (m *model) LeaseGrant(now int64, r *LeaseGrantRequest) (*LeaseGrantResponse, error) {
	id := r.ID
	for id == 0 || (r.ID == 0 && m.leases[id] != nil) {
		m.leaseSeq++
		id = int64(0x694d<<48 | m.leaseSeq)
	}
	switch {
	case r.TTL > 9_000_000_000:
		return nil, ErrLeaseTTLTooLarge
	case m.leases[id] != nil:
		return nil, ErrLeaseExist
	}
	ttl := max(r.TTL, 2)
	m.leases[id] = &mLease{ttl: ttl, expiry: now + ttl*sec}
	return &LeaseGrantResponse{Header: m.header(m.rev), ID: id, TTL: ttl}, nil
}

func (m *model) LeaseRevoke(r *LeaseRevokeRequest) (*LeaseRevokeResponse, error) {
	if m.leases[r.ID] == nil {
		return nil, ErrLeaseNotFound
	}
	m.revoke(r.ID)
	return &LeaseRevokeResponse{Header: m.header(m.rev)}, nil
}

func (m *model) revoke(id int64) {
	w := &mWrite{m: m}
	for _, k := range m.leaseKeys(id) {
		w.del([]byte(k), nil)
	}
	delete(m.leases, id)
	w.commit()
	for _, ka := range m.waiting {
		if ka.ID == id {
			m.outbox = append(m.outbox, Delivery{Stream: 2, KeepAlive: ka})
		}
	}
	m.waiting = slices.DeleteFunc(m.waiting, func(ka *LeaseKeepAliveResponse) bool { return ka.ID == id })
}

func (m *model) LeaseKeepAlive(now int64, r *LeaseKeepAliveRequest) (*LeaseKeepAliveResponse, bool) {
	l := m.leases[r.ID]
	switch {
	case l == nil:
		return &LeaseKeepAliveResponse{Header: m.header(m.rev), ID: r.ID}, true
	case l.expiry <= now:
		m.waiting = append(m.waiting, &LeaseKeepAliveResponse{Header: m.header(m.rev), ID: r.ID})
		return nil, false
	}
	l.expiry = now + l.ttl*sec
	return &LeaseKeepAliveResponse{Header: m.header(m.rev), ID: r.ID, TTL: l.ttl}, true
}

func (m *model) LeaseTimeToLive(now int64, r *LeaseTimeToLiveRequest) *LeaseTimeToLiveResponse {
	l := m.leases[r.ID]
	if l == nil {
		return &LeaseTimeToLiveResponse{Header: m.header(m.rev), ID: r.ID, TTL: -1}
	}
	resp := &LeaseTimeToLiveResponse{Header: m.header(m.rev), ID: r.ID, TTL: (l.expiry - now) / sec, GrantedTTL: l.ttl}
	if r.Keys {
		for _, k := range m.leaseKeys(r.ID) {
			resp.Keys = append(resp.Keys, []byte(k))
		}
	}
	return resp
}

// expireDue revokes, soonest first, every lease expired at now.
func (m *model) expireDue(now int64) []Expired {
	var out []Expired
	for {
		var due int64
		for id, l := range m.leases {
			d := m.leases[due]
			if l.expiry <= now && (d == nil || l.expiry < d.expiry || l.expiry == d.expiry && id < due) {
				due = id
			}
		}
		if m.leases[due] == nil {
			return out
		}
		m.revoke(due)
		out = append(out, Expired{LeaseID: due, Revision: m.rev})
	}
}

func (m *model) restart(now int64) {
	m.term++
	m.watching, m.waiting, m.outbox = 0, nil, nil
	for _, l := range m.leases {
		l.expiry = now + int64(time.Second) + l.ttl*sec
	}
}
