package etcdnode

import (
	"bytes"
	"slices"
	"strings"
)

// store is the multi-version key space, etcd's mvcc store without
// compaction: every version of every key ever written stays, which serves
// historic reads, compares and the watch history. A simulated run lasts
// minutes, so nothing is compacted and ErrCompacted never happens.
type store struct {
	rev    int64              // the current revision; a fresh store is at 1
	keys   []string           // every key ever written, sorted
	byKey  map[string]*record // looked up, never iterated
	events []Event            // every change, in (revision, order in txn) order
}

// record is one key's versions, oldest first. A tombstone (the key deleted)
// has CreateRevision 0 and only Key and ModRevision set, as etcd's.
type record struct{ versions []KeyValue }

func newStore() *store { return &store{rev: 1, byKey: map[string]*record{}} }

// keyRange is [key, end) as etcd's index reads it: end nil is the single
// key, end empty (from RangeEnd "\x00", etcd's mkGteRange) every key ≥ key.
type keyRange struct {
	key, end []byte
	gte      bool
}

// newKeyRange reads a request's Key and RangeEnd. An empty RangeEnd is the
// single key: on the wire proto3 cannot tell nil from empty.
func newKeyRange(key, rangeEnd []byte) keyRange {
	switch {
	case len(rangeEnd) == 0:
		return keyRange{key: key}
	case len(rangeEnd) == 1 && rangeEnd[0] == 0:
		return keyRange{key: key, gte: true}
	}
	return keyRange{key: key, end: rangeEnd}
}

func (r keyRange) single() bool { return r.end == nil && !r.gte }

func (r keyRange) contains(k []byte) bool {
	switch {
	case r.single():
		return bytes.Equal(k, r.key)
	case bytes.Compare(k, r.key) < 0:
		return false
	}
	return r.gte || bytes.Compare(k, r.end) < 0
}

// liveAt is the key's value at revision rev, if it existed then. Several
// versions may share a revision (a txn that deletes and puts one key): the
// last written wins, as etcd's index returns the highest sub-revision.
func (rec *record) liveAt(rev int64) (KeyValue, bool) {
	for i := len(rec.versions) - 1; i >= 0; i-- {
		if v := rec.versions[i]; v.ModRevision <= rev {
			return v, v.CreateRevision != 0
		}
	}
	return KeyValue{}, false
}

// get is key's value at revision rev.
func (s *store) get(key []byte, rev int64) (KeyValue, bool) {
	rec := s.byKey[string(key)]
	if rec == nil {
		return KeyValue{}, false
	}
	return rec.liveAt(rev)
}

// rangeAt is every key in r live at revision rev, in key order (etcd's
// index order, which its Range returns unsorted).
func (s *store) rangeAt(r keyRange, rev int64) []KeyValue {
	if r.single() {
		if kv, ok := s.get(r.key, rev); ok {
			return []KeyValue{kv}
		}
		return nil
	}
	var out []KeyValue
	i, _ := slices.BinarySearch(s.keys, string(r.key))
	for ; i < len(s.keys); i++ {
		k := s.keys[i]
		if !r.gte && strings.Compare(k, string(r.end)) >= 0 {
			break
		}
		if kv, ok := s.byKey[k].liveAt(rev); ok {
			out = append(out, kv)
		}
	}
	return out
}

// append adds a version of kv.Key and its event to the history.
func (s *store) append(kv KeyValue, typ EventType) {
	rec := s.byKey[string(kv.Key)]
	if rec == nil {
		rec = &record{}
		s.byKey[string(kv.Key)] = rec
		i, _ := slices.BinarySearch(s.keys, string(kv.Key))
		s.keys = slices.Insert(s.keys, i, string(kv.Key))
	}
	rec.versions = append(rec.versions, kv)
	ev := kv
	s.events = append(s.events, Event{Type: typ, Kv: &ev})
}

// dropRevision removes every version key got at revision rev: the undo of a
// txn that failed half way (see txnWrite.rollback).
func (s *store) dropRevision(key []byte, rev int64) {
	rec := s.byKey[string(key)]
	for len(rec.versions) > 0 && rec.versions[len(rec.versions)-1].ModRevision == rev {
		rec.versions = rec.versions[:len(rec.versions)-1]
	}
	if len(rec.versions) == 0 {
		delete(s.byKey, string(key))
		i, _ := slices.BinarySearch(s.keys, string(key))
		s.keys = slices.Delete(s.keys, i, i+1)
	}
}

// eventsFrom is the history from revision rev on (a slice of it: callers copy).
func (s *store) eventsFrom(rev int64) []Event {
	i, _ := slices.BinarySearchFunc(s.events, rev, func(e Event, r int64) int {
		return cmpInt64(e.Kv.ModRevision, r)
	})
	return s.events[i:]
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cloneKV is a copy that shares no bytes with the store: callers may keep
// and change what the member returns.
func cloneKV(kv KeyValue) *KeyValue {
	kv.Key = bytes.Clone(kv.Key)
	kv.Value = bytes.Clone(kv.Value)
	return &kv
}
