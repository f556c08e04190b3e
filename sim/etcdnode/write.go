package etcdnode

import "bytes"

// txnWrite is etcd's mvcc storeTxnWrite: all writes of one request go to the
// next revision, reads in between see them, and the store's revision moves
// only at end, and only if something changed.
type txnWrite struct {
	m        *Member
	beginRev int64
	histLen  int      // the history's length before the first write
	written  [][]byte // keys written, for rollback
}

func (m *Member) beginWrite() *txnWrite {
	return &txnWrite{m: m, beginRev: m.store.rev, histLen: len(m.store.events)}
}

func (w *txnWrite) changed() bool { return len(w.m.store.events) > w.histLen }

// readRev is the revision reads see: the one being written once something was.
func (w *txnWrite) readRev() int64 {
	if w.changed() {
		return w.beginRev + 1
	}
	return w.beginRev
}

// put writes key (storeTxnWrite.put): a live key keeps its create revision
// and counts its version up, and the key moves to its new lease.
func (w *txnWrite) put(key, value []byte, leaseID int64) int64 {
	rev := w.beginRev + 1
	kv := KeyValue{Key: bytes.Clone(key), Value: bytes.Clone(value), CreateRevision: rev, ModRevision: rev, Version: 1, Lease: leaseID}
	oldLease := int64(0)
	if prev, ok := w.m.store.get(key, rev); ok {
		kv.CreateRevision, kv.Version, oldLease = prev.CreateRevision, prev.Version+1, prev.Lease
	}
	w.m.store.append(kv, EventPut)
	w.written = append(w.written, kv.Key)
	if oldLease != leaseID {
		w.m.detach(oldLease, key)
		w.m.attach(leaseID, key)
	}
	return rev
}

// deleteRange deletes the live keys in r and says how many, and the
// revision a response reports (storeTxnWrite.DeleteRange).
func (w *txnWrite) deleteRange(r keyRange) (n, rev int64) {
	rev = w.beginRev + 1
	for _, kv := range w.m.store.rangeAt(r, w.readRev()) {
		w.m.store.append(KeyValue{Key: kv.Key, ModRevision: rev}, EventDelete)
		w.written = append(w.written, kv.Key)
		w.m.detach(kv.Lease, kv.Key)
		n++
	}
	if n == 0 && !w.changed() {
		return 0, w.beginRev
	}
	return n, rev
}

// end commits: the revision moves if anything changed, and the watchers
// hear of it.
func (w *txnWrite) end() {
	if !w.changed() {
		return
	}
	w.m.store.rev++
	w.m.notify(w.m.store.rev, w.m.store.events[w.histLen:])
}

// rollback undoes every write, for a txn that fails after its checks (etcd
// panics there instead; see Member.Unsupported). Leases cannot change within
// a txn, so each written key goes back to the lease its restored version
// names.
func (w *txnWrite) rollback() {
	s := w.m.store
	rev := w.beginRev + 1
	undone := map[string]bool{} // a key may have been written twice
	for i := len(w.written) - 1; i >= 0; i-- {
		key := w.written[i]
		if undone[string(key)] {
			continue
		}
		undone[string(key)] = true
		if kv, ok := s.get(key, rev); ok {
			w.m.detach(kv.Lease, key)
		}
		s.dropRevision(key, rev)
		if kv, ok := s.get(key, rev); ok {
			w.m.attach(kv.Lease, key)
		}
	}
	s.events = s.events[:w.histLen]
	w.written = nil
}
