package etcdnode

import (
	"bytes"
	"cmp"
	"math"
	"slices"
)

// Watches live on streams, named by the caller's stream IDs (a gRPC watch
// stream each); within a stream each watch has etcd's watch ID. The history
// is never compacted, so any start revision ≥ 1 can be caught up from.

// watchBatchMaxRevs is mvcc's: a catch-up response holds at most this many
// revisions; the rest follow in further responses.
const watchBatchMaxRevs = 1000

type watcher struct {
	stream   uint64
	id       int64
	keys     keyRange
	startRev int64 // as asked for
	minRev   int64 // the first revision not yet sent
	prevKV   bool
	noPut    bool
	noDelete bool
}

type watchState struct {
	watchers []*watcher       // sorted by (stream, id): the delivery order
	nextID   map[uint64]int64 // per stream, the next automatic watch ID
}

func newWatchState() watchState { return watchState{nextID: map[uint64]int64{}} }

// find is where watch (stream, id) is, or would go.
func (ws *watchState) find(stream uint64, id int64) (int, bool) {
	return slices.BinarySearchFunc(ws.watchers, stream, func(w *watcher, stream uint64) int {
		return cmp.Or(cmp.Compare(w.stream, stream), cmp.Compare(w.id, id))
	})
}

// Watch creates a watch on stream (etcd's WatchCreateRequest) and returns
// what etcd sends back on that stream at once: the Created response, then,
// for a StartRevision at or below the current revision, the history since
// it (one response per 1000 revisions, each with the current revision in its
// header; none if no event matches). A refused watch is a single response,
// Created and Canceled, with WatchId -1 and the reason.
func (m *Member) Watch(now int64, stream uint64, r *WatchCreateRequest) []*WatchResponse {
	rev := m.store.rev
	key := r.Key
	if len(key) == 0 {
		key = []byte{0} // the smallest key, as v3rpc makes it
	}
	keys := newKeyRange(key, r.RangeEnd)
	id, reason := m.watchID(stream, r, keys)
	if reason != "" {
		return []*WatchResponse{{Header: m.header(rev), WatchId: -1, Created: true, Canceled: true, CancelReason: reason}}
	}
	m.noteWatchOptions(r)
	w := &watcher{stream: stream, id: id, keys: keys, startRev: r.StartRevision, minRev: max(rev+1, r.StartRevision), prevKV: r.PrevKv}
	for _, f := range r.Filters {
		w.noPut = w.noPut || f == FilterNoPut
		w.noDelete = w.noDelete || f == FilterNoDelete
	}
	i, _ := m.watch.find(stream, id)
	m.watch.watchers = slices.Insert(m.watch.watchers, i, w)
	out := []*WatchResponse{{Header: m.header(rev), WatchId: id, Created: true}}
	if r.StartRevision > 0 && r.StartRevision <= rev {
		out = append(out, m.catchUp(w, r.StartRevision, rev)...)
	}
	return out
}

// watchID picks the new watch's ID, or says why there is none, in etcd's
// order of checks: a negative start, an empty range, a taken ID. ID 0 asks
// for the stream's next free one.
func (m *Member) watchID(stream uint64, r *WatchCreateRequest, keys keyRange) (int64, string) {
	switch {
	case r.StartRevision < 0:
		return 0, ReasonCompacted
	case keys.end != nil && bytes.Compare(keys.key, keys.end) >= 0:
		return 0, ReasonEmptyWatchRange
	case r.WatchId != 0:
		if _, taken := m.watch.find(stream, r.WatchId); taken {
			return 0, ReasonDuplicateWatchID
		}
		return r.WatchId, ""
	}
	id := m.watch.nextID[stream]
	for _, taken := m.watch.find(stream, id); taken; _, taken = m.watch.find(stream, id) {
		id++
	}
	m.watch.nextID[stream] = id + 1
	return id, ""
}

func (m *Member) noteWatchOptions(r *WatchCreateRequest) {
	if r.ProgressNotify {
		m.note("watch progress_notify")
	}
	if r.Fragment {
		m.note("watch fragment")
	}
}

// catchUp is what mvcc's syncWatchers sends a new watcher from history:
// events from revision from through rev, at most watchBatchMaxRevs
// revisions per response.
func (m *Member) catchUp(w *watcher, from, rev int64) []*WatchResponse {
	var out []*WatchResponse
	var batch []Event
	revs := 0
	flush := func() {
		if resp := m.watchResponse(w, batch, rev); resp != nil {
			out = append(out, resp)
		}
		batch, revs = nil, 0
	}
	for _, ev := range m.store.eventsFrom(from) {
		if !w.keys.contains(ev.Kv.Key) {
			continue
		}
		if len(batch) == 0 || ev.Kv.ModRevision > batch[len(batch)-1].Kv.ModRevision {
			if revs == watchBatchMaxRevs {
				flush()
			}
			revs++
		}
		batch = append(batch, ev)
	}
	flush()
	w.minRev = rev + 1
	return out
}

// watchResponse is a response with w's share of events, filtered, with
// previous values if asked; nil if nothing is left to send.
func (m *Member) watchResponse(w *watcher, evs []Event, rev int64) *WatchResponse {
	var out []*Event
	for _, ev := range evs {
		if ev.Type == EventPut && w.noPut || ev.Type == EventDelete && w.noDelete {
			continue
		}
		e := &Event{Type: ev.Type, Kv: cloneKV(*ev.Kv)}
		if w.prevKV && !(ev.Type == EventPut && ev.Kv.CreateRevision == ev.Kv.ModRevision) {
			if prev, ok := m.store.get(ev.Kv.Key, ev.Kv.ModRevision-1); ok {
				e.PrevKv = cloneKV(prev)
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil
	}
	return &WatchResponse{Header: m.header(rev), WatchId: w.id, Events: out}
}

// notify records, for each watcher in (stream, ID) order, the events of the
// write at revision rev it watches (mvcc notify).
func (m *Member) notify(rev int64, evs []Event) {
	for _, w := range m.watch.watchers {
		var mine []Event
		for _, ev := range evs {
			if ev.Kv.ModRevision >= w.minRev && w.keys.contains(ev.Kv.Key) {
				mine = append(mine, ev)
			}
		}
		if len(mine) == 0 {
			continue
		}
		w.minRev = rev + 1
		if resp := m.watchResponse(w, mine, rev); resp != nil {
			m.outbox = append(m.outbox, Delivery{Stream: w.stream, Watch: resp})
		}
	}
}

// CancelWatch cancels a watch and returns etcd's answer, Canceled; nil if
// there is no such watch on the stream (etcd answers nothing then).
func (m *Member) CancelWatch(now int64, stream uint64, watchID int64) *WatchResponse {
	i, ok := m.watch.find(stream, watchID)
	if !ok {
		return nil
	}
	m.watch.watchers = slices.Delete(m.watch.watchers, i, i+1)
	return &WatchResponse{Header: m.header(m.store.rev), WatchId: watchID, Canceled: true}
}

// RequestProgress answers a WatchProgressRequest on stream: a response
// without events, WatchId -1, carrying the current revision, which promises
// no event at or below it is still to come. As etcd (progressIfSync), none
// when the stream has no watch, or a watch starts beyond the current
// revision; the member's watches are never behind.
func (m *Member) RequestProgress(now int64, stream uint64) *WatchResponse {
	i, _ := m.watch.find(stream, math.MinInt64)
	found := false
	for _, w := range m.watch.watchers[i:] {
		if w.stream != stream {
			break
		}
		if w.startRev > m.store.rev {
			return nil
		}
		found = true
	}
	if !found {
		return nil
	}
	return &WatchResponse{Header: m.header(m.store.rev), WatchId: -1}
}

// CloseStream forgets a stream the client closed or lost: its watches, and
// the keep-alives waiting on it (stream IDs name watch and keep-alive
// streams alike; the caller keeps them distinct).
func (m *Member) CloseStream(stream uint64) {
	m.watch.watchers = slices.DeleteFunc(m.watch.watchers, func(w *watcher) bool { return w.stream == stream })
	delete(m.watch.nextID, stream)
	m.waiting = slices.DeleteFunc(m.waiting, func(k waitingKeepAlive) bool { return k.stream == stream })
}
