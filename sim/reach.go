package sim

import (
	"cmp"
	"slices"
	"sort"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// What liveness is judged by (model.CheckLiveness, model's leftovers): when
// each client could make progress (Reach), and which lock items stayed on
// their nodes for long (LongItems). Both are worked out from what the run
// did, without adding an event to the queue: the trace hash of a run does
// not depend on them.

// itemWritten notes who wrote the item request m just wrote on n, and when.
func (w *world) itemWritten(n *node, m *message) {
	if i := n.store.find(m.req.key); i >= 0 {
		e := &n.store.entries[i].entry
		e.since, e.writer = w.now, int32(m.from.client())
	}
}

// itemGone hears of an entry leaving node ni's store. The application's
// data destroyed by a client is History.DataLoss (a node losing its data
// is not the lock's doing); a lock item that leaves after a long stay
// (more than two TTLs) is one of History.LongItems, gone at true time now
// or, when its node-side TTL (or its lease) ran out earlier, then.
func (w *world) itemGone(ni int, e *keyEntry, how goneHow) {
	if e.app && w.items {
		w.hist.Items = append(w.hist.Items, w.endedBy(ni, how, model.ItemLife{Node: w.nodes[ni].name, Key: e.key, App: true,
			Client: -1, From: e.since, To: w.now}))
	}
	if e.app {
		if how == goneRemoved || how == goneOverwritten {
			what := "removed"
			if how == goneOverwritten {
				what = "overwrote"
			}
			w.hist.DataLoss = append(w.hist.DataLoss, model.DataLost{Node: w.nodes[ni].name, Key: e.key,
				Time: w.now, Client: int(w.nodes[ni].store.by), How: what})
		}
		return
	}
	if e.owner == "" || (!w.items && w.now-e.since <= 2*int64(w.cfg.TTL)) {
		return
	}
	to := w.now
	if e.expireAt != 0 {
		to = min(to, w.nodes[ni].clock.trueAt(e.expireAt, e.since))
	}
	if at, ok := w.nodes[ni].store.leaseExpiry(e.lease); ok {
		// A key attached to a lease goes when the lease runs out; the store
		// removes both lazily, at the node's next request, which may never
		// come.
		if t := w.nodes[ni].clock.trueAt(at, e.since); t >= 0 {
			to = min(to, t)
		}
	}
	if w.items {
		w.hist.Items = append(w.hist.Items, w.endedBy(ni, how, model.ItemLife{Node: w.nodes[ni].name, Owner: e.owner, Key: e.key,
			Client: int(e.writer), From: e.since, To: to}))
	}
	if to-e.since > 2*int64(w.cfg.TTL) {
		w.hist.LongItems = append(w.hist.LongItems, model.ItemLife{Node: w.nodes[ni].name, Owner: e.owner,
			Client: int(e.writer), From: e.since, To: to})
	}
}

// endedBy is stay l with how it ended: by the request node ni applies now
// (its client, and when it left the client) when a request ended it.
func (w *world) endedBy(ni int, how goneHow, l model.ItemLife) model.ItemLife {
	l.How, l.By = goneWords[how], -1
	if how == goneRemoved || how == goneOverwritten {
		st := w.nodes[ni].store
		l.By, l.Sent = int(st.by), st.byAt
	}
	return l
}

// itemBefore is the lock item m's write finds on n, as a stay that the
// write ends if it rewrites it (the same owner's): its To is left for the
// caller. Zero if there is none, or it is the application's data.
func (w *world) itemBefore(n *node, m *message) model.ItemLife {
	i := n.store.find(m.req.key)
	if i < 0 {
		return model.ItemLife{}
	}
	e := &n.store.entries[i].entry
	if e.app || e.owner == "" || e.expired(n.clock.local(w.now)) {
		return model.ItemLife{}
	}
	return model.ItemLife{Node: n.name, Owner: e.owner, Key: m.req.key, Client: int(e.writer), From: e.since}
}

// longItemsAtEnd records the lock items still on their nodes when the run
// ends, as if they went then.
func (w *world) longItemsAtEnd() {
	for ni := range w.nodes {
		for i := range w.nodes[ni].store.entries {
			w.itemGone(ni, &w.nodes[ni].store.entries[i], goneAtEnd)
		}
	}
}

// computeReach fills History.Reach: per client, the stretches of the run
// during which it was not paused, the key's nodes were not changing (a
// change spreading to the clients' caches counts as changing), and a
// majority of them were up (not crashed, not clogged, not refusing lock
// writes in quarantine) and reachable from its host both ways. A network
// in which no round trip comes back within the RPC timeout is never
// reachable (see healedAt); one in which some round trips come back late
// is a lossy one, reachable, and a variant that needs loss bounded says so
// (sim/envelope's lossBreach counts late round trips as lost).
//
// It walks the instants at which reachability can change once, in order,
// keeping the moves and partitions in force as it goes: O(n log n) in the
// plan's events and the history's pauses, restarts and moves (times the
// world's hosts and nodes), not the product of two of them.
func (w *world) computeReach() {
	w.hist.Reachable = true
	end := w.hist.End
	if w.neverInTime() || end <= 0 {
		return
	}
	u := w.obstacles()
	mv := newMoveWalk(w.hist.Moves, w.placement(w.views[0], LockKey))
	cuts := w.newCutWalk(u.parts)
	open := make([]int, len(w.clients)) // per client: index+1 of its open Reach, 0 none
	hostOK := make([]bool, len(w.hosts))
	for k, t := range u.points {
		if t >= end {
			break
		}
		next := end
		if k+1 < len(u.points) {
			next = u.points[k+1]
		}
		replicas, changing := mv.at(t)
		cuts.at(t)
		for h := range hostOK {
			hostOK[h] = !changing && w.majorityFrom(u, cuts, h, replicas, t)
		}
		for c, p := range w.clients {
			ok := hostOK[p.host] && !u.paused[c].has(t)
			switch {
			case ok && open[c] > 0:
				w.hist.Reach[open[c]-1].To = next
			case ok:
				w.hist.Reach = append(w.hist.Reach, model.Reach{Client: c, From: t, To: next})
				open[c] = len(w.hist.Reach)
			default:
				open[c] = 0
			}
		}
	}
	slices.SortStableFunc(w.hist.Reach, func(a, b model.Reach) int { return a.Client - b.Client })
}

// window is a stretch [from, to) of true time.
type window struct{ from, to int64 }

// cover is a union of windows: sorted, disjoint, none empty.
type cover []window

// newCover is the union of ws (which it sorts).
func newCover(ws []window) cover {
	slices.SortFunc(ws, func(a, b window) int { return cmp.Compare(a.from, b.from) })
	var out cover
	for _, x := range ws {
		switch {
		case x.from >= x.to:
			continue // empty: holds no instant
		case len(out) > 0 && x.from <= out[len(out)-1].to:
			out[len(out)-1].to = max(out[len(out)-1].to, x.to)
		default:
			out = append(out, x)
		}
	}
	return out
}

// has reports whether t is in one of the cover's windows.
func (c cover) has(t int64) bool {
	i := sort.Search(len(c), func(i int) bool { return c[i].to > t })
	return i < len(c) && c[i].from <= t
}

// obstacles are what keep clients from the key's nodes during a run, as
// windows of true time: crashed or quarantined nodes, clogged nodes, the
// plan's partitions, paused clients; and points, every instant at which
// reachability can change (sorted, each once, from 0 to the run's end).
type obstacles struct {
	down, clog [64]cover // per node
	parts      []int     // indexes of the plan's partitions
	paused     []cover   // per client
	points     []int64
}

// obstacles collects the run's obstacles from its plan and history.
func (w *world) obstacles() *obstacles {
	end := w.hist.End
	var down, clog [64][]window
	paused := make([][]window, len(w.clients))
	u := &obstacles{paused: make([]cover, len(w.clients)), points: []int64{0}}
	span := func(at, d int64) window {
		if d <= 0 {
			return window{at, end} // for good
		}
		return window{at, min(at+d, end)}
	}
	add := func(ws *[]window, x window) {
		if ws != nil {
			*ws = append(*ws, x)
		}
		u.points = append(u.points, x.from, x.to)
	}
	for i, e := range w.plan.Events {
		at, d := int64(e.At), int64(e.For)
		switch e.Kind {
		case faults.Crash:
			add(&down[e.Node], span(at, d))
		case faults.Clog:
			add(&clog[e.Node], span(at, d))
		case faults.Partition:
			u.parts = append(u.parts, i)
			add(nil, span(at, d))
		case faults.Pause:
			if e.Point == "" && e.Client < len(paused) {
				add(&paused[e.Client], span(at, d))
			}
		}
	}
	for _, p := range w.hist.Pauses {
		if p.Client < len(paused) {
			add(&paused[p.Client], span(p.Time, p.For))
		}
	}
	if w.quarantine {
		for _, r := range w.hist.Restarts {
			add(&down[r.Node], span(r.Time, int64(w.cfg.TTL))) // no lock writes
		}
	}
	for _, mv := range w.hist.Moves {
		add(nil, window{mv.Time, max(mv.Time, mv.Until)})
	}
	for n := range down {
		u.down[n], u.clog[n] = newCover(down[n]), newCover(clog[n])
	}
	for c := range paused {
		u.paused[c] = newCover(paused[c])
	}
	u.points = append(u.points, end)
	slices.Sort(u.points)
	u.points = slices.Compact(u.points)
	return u
}

// majorityFrom reports whether, at true time t, a majority of replicas is
// up, takes lock writes, and can be reached from host both ways.
func (w *world) majorityFrom(u *obstacles, cuts *cutWalk, host int, replicas []int, t int64) bool {
	if len(replicas) == 0 {
		return false
	}
	up := 0
	for _, n := range replicas {
		if !u.down[n].has(t) && !u.clog[n].has(t) && !cuts.cut(host, n) {
			up++
		}
	}
	return up > len(replicas)/2
}
