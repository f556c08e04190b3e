package realredis

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/redisnode"
)

// Retry is what a lock's Lock promises about trying again before it
// reports failure: it keeps trying for at least For after it is called
// (or until its caller's deadline, if that is sooner), and never waits
// longer than Gap between two tries (its retry delay, plus the time a
// failed try takes). redsync's defaults (32 tries, 50 to 250 ms apart)
// promise about For 1.5 s, Gap 250 ms plus a try's timeout; a lock with no
// retries promises nothing (the zero Retry) and is not judged so.
//
// A Lock that returns a definite failure (not a network error, not its
// caller's deadline) before For is up is watched: the coordinator reads
// the nodes it asked in that call, as the probe for a leaked lock does,
// every few milliseconds until the promise ends. If a majority of them is
// up, reachable from its host and free of every lock value for longer
// than Gap plus two round trips at the network's slowest, with no grant
// to anyone in between, any try the promise owed would have got the
// lock: a model.GaveUpWhileFree finding. A lossy network (loss of
// requests or replies) can defeat any number of tries, so a plan with
// loss is not judged.
//
// A Lock call under way is watched too, from its first request, for as
// long as it lasts (or to its caller's deadline): if the lock stays free
// on a majority of the nodes it asked for longer than Gap plus three round
// trips while nothing is in the way (the client is not paused, every node
// it asked is up, unclogged and reachable both ways, none of its
// connections to them waits on a lost message, no timed fault began or
// ended), with no grant to anyone, the call starved while a try would
// have taken the lock: a model.StarvedWhileFree finding. That is the
// failover bound of such a lock: a lock freed (released, or expired on the
// nodes after its holder stopped) is taken within a gap and the round
// trips by a client waiting in Lock. Redis locks promise no fairness: a
// client that loses every race to a free lock is not starved by this
// measure, only one whose tries do not come.
type Retry struct {
	For time.Duration
	Gap time.Duration
}

// Validate reports a promise that makes no sense.
func (r Retry) Validate() error {
	switch {
	case r.For < 0 || r.Gap < 0:
		return fmt.Errorf("retry promise: for (%s) and gap (%s) must not be negative", r.For, r.Gap)
	case r.For > 0 && r.Gap == 0:
		return fmt.Errorf("retry promise: a lock that tries for %s must say the longest wait between its tries (gap)", r.For)
	}
	return nil
}

// freeWatch is the coordinator's watch over the nodes a Lock asked, after
// it gave up before its promise was up.
type freeWatch struct {
	client           int
	called, returned int64
	until            int64 // the promise's end, true time
	need, step       int64 // how long free counts; how often it looks
	asked            []int // the nodes the call asked
	reason           string
	since            int64  // free since (-1: not free at the last look)
	grants           uint64 // w.grants at since
	done             bool
	inCall           bool // watching a Lock call under way (starvation), not one that gave up
}

// starving reports whether Lock calls under way are watched: the lock
// promises a gap between tries, its nodes are Redis nodes, and the
// network loses nothing (as for watchGaveUp).
func (w *world) starving() bool {
	return w.lock.Retry.Gap > 0 && w.lock.New != nil && w.plan.Network.LossPPM == 0 && w.plan.Network.ReplyLossPPM == 0 &&
		2*w.cfg.LatencyMin <= w.cfg.RPCTimeout
}

// oneWay is the longest a message takes one way, true time.
func (w *world) oneWay() int64 {
	return int64(w.cfg.LatencyMax + w.cfg.LatencyTail + w.plan.Network.ExtraLatencyMax + w.cfg.SlowExtra)
}

// watchStep is how often a watch that needs a stretch of need looks.
func watchStep(need int64) int64 {
	return min(max(need/8, int64(time.Millisecond)), int64(50*time.Millisecond))
}

// watchStarved starts watching client c's Lock call under way, as it sends
// a request (its first one starts the watch), when the lock promises a gap
// between tries.
func (w *world) watchStarved(c int, now int64) {
	if !w.starving() {
		return
	}
	cl := w.clients[c]
	cl.mu.Lock()
	op, from, deadline := cl.op, cl.lockFrom, cl.lockDeadline
	cl.mu.Unlock()
	if op != model.AcquireCall || cl.watched == from+1 {
		return
	}
	cl.watched = from + 1
	until := w.end
	if deadline > 0 {
		until = min(until, deadline)
	}
	need := int64(w.lock.Retry.Gap) + 6*w.oneWay() + int64(time.Millisecond)
	if now+need > until {
		return
	}
	w.watches = append(w.watches, freeWatch{client: c, called: from, until: until, need: need, step: watchStep(need), since: -1, inCall: true})
	w.push(&event{at: now, kind: evWatch, idx: len(w.watches) - 1})
}

// calling reports whether the Lock call watch f watches is still under way,
// and brings f.asked up to the nodes it has asked so far.
func (w *world) calling(f *freeWatch) bool {
	cl := w.clients[f.client]
	cl.mu.Lock()
	still := cl.op == model.AcquireCall && cl.lockFrom == f.called
	cl.mu.Unlock()
	f.asked = f.asked[:0]
	for i, at := range w.sent[f.client].asked {
		if at >= f.called {
			f.asked = append(f.asked, i)
		}
	}
	return still
}

// unanswered is a dial the coordinator left unanswered; gone is set by the
// dialer when it gives the dial up.
type unanswered struct {
	dial   chan dialResult
	client int
	gone   *atomic.Int64
}

// unhindered reports whether nothing but the lock stands between watch f's
// client and the nodes it asked at now: it is not paused, each node is up,
// unclogged and reachable both ways, none of its connections waits on a
// message that was lost and none of its dials on an answer (the library
// would wait out its timeout), and its network has not failed it for an
// RPC timeout (a library backs off and retries after a network error, on
// timers of its own). Connections seen closed leave the client's list.
func (w *world) unhindered(f *freeWatch, now int64) bool {
	cl := w.clients[f.client]
	if cl.pausedUntil(now) > now {
		return false
	}
	for _, u := range w.noAnswer {
		if u.client != f.client || u.gone == nil {
			continue
		}
		gone := u.gone.Load()
		if gone == 0 {
			return false
		}
		cl.trouble = max(cl.trouble, gone)
	}
	for _, p := range w.hist.Pauses {
		if p.Client == f.client && p.Time <= now && now < p.Time+p.For {
			return false
		}
	}
	for _, i := range f.asked {
		n := w.nodes[i]
		if n.down > 0 || n.clogUntil > now || w.cut(cl.host, i, true) || w.cut(cl.host, i, false) {
			return false
		}
	}
	ok, kept := true, cl.conns[:0]
	for _, c := range cl.conns {
		c.mu.Lock()
		closed, closedAt, waiting := c.closed, c.closedAt, c.sent > c.answered
		c.mu.Unlock()
		if closed {
			if c.dead {
				cl.trouble = max(cl.trouble, closedAt)
			}
			continue
		}
		kept = append(kept, c)
		if c.dead && waiting {
			ok = false
		}
	}
	clear(cl.conns[len(kept):])
	cl.conns = kept
	return ok && (cl.trouble == 0 || now >= cl.trouble+int64(w.cfg.RPCTimeout))
}

// watchGaveUp starts watching after the failed Lock of probe p (client
// c), when the lock promises retries that p returned before the end of.
func (w *world) watchGaveUp(c int, p *probe, now int64) {
	r := w.lock.Retry
	if r.For <= 0 || w.plan.Network.LossPPM > 0 || w.plan.Network.ReplyLossPPM > 0 || 2*w.cfg.LatencyMin > w.cfg.RPCTimeout {
		return
	}
	until := p.from + int64(r.For)
	if p.deadline > 0 {
		until = min(until, p.deadline)
	}
	until = min(until, w.end)
	need := int64(r.Gap) + 4*w.oneWay() + int64(time.Millisecond)
	if now+need > until {
		return
	}
	f := freeWatch{client: c, called: p.from, returned: now, until: until, need: need,
		step: watchStep(need), reason: p.reason, since: -1}
	for i, at := range w.sent[c].asked {
		if at >= p.from {
			f.asked = append(f.asked, i)
		}
	}
	if len(f.asked) == 0 {
		return
	}
	w.watches = append(w.watches, f)
	w.push(&event{at: now, kind: evWatch, idx: len(w.watches) - 1})
}

// lookFree is one look of watch i at now.
func (w *world) lookFree(i int, now int64) {
	f := &w.watches[i]
	if f.done || w.ended {
		return
	}
	if f.inCall && !w.calling(f) {
		f.done = true
		return
	}
	var free []int
	if !f.inCall || w.unhindered(f, now) {
		free = w.freeNodes(f, now)
	}
	w.hmu.Lock()
	grants := w.grants
	w.hmu.Unlock()
	switch {
	case 2*len(free) <= len(f.asked):
		f.since = -1
	case f.since < 0 || grants != f.grants || f.inCall && w.lastFault > f.since:
		f.since, f.grants = now, grants
	}
	if f.since >= 0 && now-f.since >= f.need {
		f.done = true
		names := make([]string, len(free))
		for j, n := range free {
			names[j] = fmt.Sprintf("n%d", n)
		}
		w.hmu.Lock()
		if f.inCall {
			w.hist.Starved = append(w.hist.Starved, model.Starved{Client: f.client, Called: f.called, Gap: int64(w.lock.Retry.Gap),
				FreeFrom: f.since, FreeTo: now, Nodes: names, Asked: len(f.asked)})
		} else {
			w.hist.GaveUps = append(w.hist.GaveUps, model.GaveUp{Client: f.client, Called: f.called, Time: f.returned,
				Promised: f.until, Gap: int64(w.lock.Retry.Gap), FreeFrom: f.since, FreeTo: now,
				Nodes: names, Asked: len(f.asked), Reason: f.reason})
		}
		w.hmu.Unlock()
		return
	}
	next := now + f.step
	from := next
	if f.since >= 0 {
		from = f.since
	}
	if from+f.need > f.until {
		return // no stretch long enough fits in the promise any more
	}
	w.push(&event{at: next, kind: evWatch, idx: i})
}

// freeNodes are the nodes watch f's call asked that, at now, are up, not
// clogged, reachable from its client's host both ways, and hold no live
// key whose value any client sent during a Lock (no lock item).
func (w *world) freeNodes(f *freeWatch, now int64) []int {
	host := w.clients[f.client].host
	var free []int
	for _, i := range f.asked {
		n := w.nodes[i]
		if n.down > 0 || n.clogUntil > now || w.cut(host, i, true) || w.cut(host, i, false) {
			continue
		}
		if !slices.ContainsFunc(n.store.Keys(int64(n.local(now))), func(e redisnode.Entry) bool { return w.lockValue(e.Value) }) {
			free = append(free, i)
		}
	}
	return free
}

// lockValue reports whether some client sent value during a Lock call.
func (w *world) lockValue(value string) bool {
	for i := range w.sent {
		if w.sent[i].at != nil {
			if _, ok := w.sent[i].at[value]; ok {
				return true
			}
		}
	}
	return false
}
