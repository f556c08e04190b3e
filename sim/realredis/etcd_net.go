package realredis

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/etcdnode"
)

// scheduleEtcd puts the instant's etcd messages on the wire in an order of
// its own: streams opened get their IDs first, by (instant, client,
// connection, kind); then every message by (instant, client, connection,
// what it is, stream, its number on the stream, its bytes). Two messages
// alike in all of that would be ordered by goroutine arrival: the run
// fails instead.
func (w *world) scheduleEtcd(ms []*emsg, at map[*emsg]int64) {
	rank := func(m *emsg) int {
		switch {
		case m.open:
			return 0
		case m.call != nil:
			return 1
		case m.close:
			return 3
		}
		return 2
	}
	order := func(a, b *emsg) int {
		c := cmp.Or(cmp.Compare(at[a], at[b]), cmp.Compare(a.tr.conn.c.idx, b.tr.conn.c.idx), cmp.Compare(a.tr.gen, b.tr.gen),
			cmp.Compare(rank(a), rank(b)))
		if c != 0 || rank(a) == 1 {
			return cmp.Or(c, bytes.Compare(a.key, b.key))
		}
		if rank(a) == 0 {
			return cmp.Compare(a.stream.kind, b.stream.kind)
		}
		return cmp.Or(cmp.Compare(a.stream.id, b.stream.id), cmp.Compare(a.seq, b.seq), bytes.Compare(a.key, b.key))
	}
	if len(ms) > maxEtcdAtInstant {
		w.fail(ms[0].tr.conn.c, model.Livelock, fmt.Sprintf("the clients sent the member %d messages at %s without virtual time passing (a library looping without a pause?)", len(ms), model.Seconds(at[ms[0]])))
		return
	}
	opens := slices.DeleteFunc(slices.Clone(ms), func(m *emsg) bool { return !m.open })
	slices.SortStableFunc(opens, order)
	for i, m := range opens {
		if i > 0 && order(opens[i-1], m) == 0 {
			w.setErr(fmt.Errorf("client %s opened two %s streams at %s: locksim cannot order them without the scheduler", m.tr.conn.c.name, m.stream.kind, model.Seconds(at[m])))
			return
		}
		w.nextStream++
		m.stream.id = w.nextStream
		w.estreams[m.stream.id] = m.stream
	}
	slices.SortStableFunc(ms, order)
	for i, m := range ms {
		if i > 0 && order(ms[i-1], m) == 0 && !m.open {
			w.setErr(fmt.Errorf("client %s sent the member two identical messages at %s: locksim cannot order them without the scheduler", m.tr.conn.c.name, model.Seconds(at[m])))
			return
		}
	}
	for _, m := range ms {
		if w.tracing && !w.ended {
			// Not hashed (what arrives is): where two runs part, a trace
			// shows which message left at another instant.
			w.trace = append(w.trace, model.TraceEvent{Time: at[m], What: fmt.Sprintf("%s#%d sends %s", m.tr.conn.c.name, m.tr.gen, m.what())})
		}
		w.sendUp(m, w.now())
	}
}

// maxEtcdAtInstant bounds the messages the clients may send in one
// instant: more is a library spinning in no time.
const maxEtcdAtInstant = 100_000

// sendUp puts one client message on the wire to the member at true time
// at. A paused client's messages wait for the pause to end (the process
// is stopped; its socket keeps what it had written).
func (w *world) sendUp(m *emsg, at int64) {
	tr, cl := m.tr, m.tr.conn.c
	if !tr.seen {
		tr.seen = true
		w.etrs = append(w.etrs, tr)
	}
	if w.ended {
		// Refused: what the library does once the run is over (a session
		// revoking its lease on close) must not wait for an answer. Not
		// noted: the clients wind down in whatever order their goroutines
		// run, which is not the run's.
		tr.dead = true
		w.staged = append(w.staged, stagedEffect{tr: tr, err: &etcdnode.Error{Code: codeUnavailable, Msg: "connection refused"}, broken: true})
		return
	}
	if tr.dead {
		return
	}
	w.hist.Messages++
	w.requests++
	at = w.etcdPauseBefore(cl, at, m)
	at = max(at, cl.pausedUntil(at), cl.heldUntil(at))
	switch {
	case w.chance(w.plan.Network.LossPPM):
		w.loseEtcd(tr, at, "lost: "+m.what())
		return
	case w.cut(cl.host, 0, true):
		w.loseEtcd(tr, at, "partitioned: "+m.what())
		return
	}
	d := max(at+w.latency(cl, 0), tr.lastToNode, w.nodes[0].clogUntil)
	tr.lastToNode = d
	w.push(&event{at: d, kind: evEtcdUp, emsg: m})
}

// what names a message in the trace.
func (m *emsg) what() string {
	switch {
	case m.open:
		return fmt.Sprintf("open %s stream", m.stream.kind)
	case m.close:
		return fmt.Sprintf("close stream %d", m.stream.id)
	case m.call != nil:
		return fmt.Sprintf("%T %s", m.call.req, m.key)
	}
	return fmt.Sprintf("stream %d: %T %s", m.stream.id, m.msg, m.key)
}

// arrive applies a client's message on the member.
func (w *world) arrive(m *emsg, now int64) {
	tr, n := m.tr, w.nodes[0]
	if tr.dead {
		return
	}
	if n.down > 0 {
		if n.blackHole > 0 {
			w.loseEtcd(tr, now, "member down, not answering")
		} else {
			w.breakEtcd(tr, now, "member down", "connection refused")
		}
		return
	}
	local := n.memberClock(now)
	switch {
	case m.open:
		w.note(now, fmt.Sprintf("%s opens %s stream %d", tr.conn.c.name, m.stream.kind, m.stream.id))
	case m.close:
		n.member.CloseStream(m.stream.id)
		w.note(now, fmt.Sprintf("%s closes stream %d", tr.conn.c.name, m.stream.id))
		w.sendDown(tr, now, stagedEffect{stream: m.stream, eof: true}, "end of stream")
	case m.call != nil:
		resp, err := w.applyCall(n.member, int64(local), m.call.req)
		w.trackLease(tr.conn.c.idx, m.call.req, resp, err, now)
		w.served[tr.conn.c.idx] = append(w.served[tr.conn.c.idx], now)
		w.noteEtcd(now, tr, m.key, resp, err)
		w.sendDown(tr, now, stagedEffect{call: m.call, resp: resp, err: err}, "answer")
	default:
		for _, r := range w.applyStream(n.member, int64(local), m) {
			w.noteEtcd(now, tr, m.key, r, nil)
			w.sendDown(tr, now, stagedEffect{stream: m.stream, msg: r}, "stream message")
		}
	}
	w.deliverMember(now)
}

// applyCall runs one unary request on the member.
func (w *world) applyCall(mb *etcdnode.Member, now int64, req any) (any, error) {
	switch r := req.(type) {
	case *etcdnode.RangeRequest:
		return nilIfErr(mb.Range(now, r))
	case *etcdnode.PutRequest:
		return nilIfErr(mb.Put(now, r))
	case *etcdnode.DeleteRangeRequest:
		return nilIfErr(mb.DeleteRange(now, r))
	case *etcdnode.TxnRequest:
		return nilIfErr(mb.Txn(now, r))
	case *etcdnode.LeaseGrantRequest:
		return nilIfErr(mb.LeaseGrant(now, r))
	case *etcdnode.LeaseRevokeRequest:
		return nilIfErr(mb.LeaseRevoke(now, r))
	case *etcdnode.LeaseTimeToLiveRequest:
		return nilIfErr(mb.LeaseTimeToLive(now, r))
	case *etcdnode.LeaseLeasesRequest:
		return nilIfErr(mb.LeaseLeases(now, r))
	}
	return nil, &etcdnode.Error{Code: 12, Msg: fmt.Sprintf("locksim: the simulated member does not serve %T", req)}
}

// nilIfErr keeps a typed nil answer from reaching the shim as non-nil.
func nilIfErr[R any](r *R, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// applyStream runs one stream message on the member: what it answers at
// once on the same stream.
func (w *world) applyStream(mb *etcdnode.Member, now int64, m *emsg) []any {
	switch r := m.msg.(type) {
	case *etcdnode.LeaseKeepAliveRequest:
		if resp, ok := mb.LeaseKeepAlive(now, m.stream.id, r); ok {
			return []any{resp}
		}
	case *etcdnode.WatchRequest:
		switch {
		case r.Create != nil:
			var out []any
			for _, resp := range mb.Watch(now, m.stream.id, r.Create) {
				out = append(out, resp)
			}
			return out
		case r.Cancel != nil:
			if resp := mb.CancelWatch(now, m.stream.id, r.Cancel.WatchId); resp != nil {
				return []any{resp}
			}
		}
	}
	return nil
}

// deliverMember sends what the member sent by itself (watch events, the
// answers to keep-alives that waited for a revocation) down its streams.
func (w *world) deliverMember(now int64) {
	for _, d := range w.nodes[0].member.TakeDeliveries() {
		s := w.estreams[d.Stream]
		if s == nil {
			continue
		}
		var msg any = d.Watch
		if d.Watch == nil {
			msg = d.KeepAlive
		}
		w.noteEtcd(now, s.tr, nil, msg, nil)
		w.sendDown(s.tr, now, stagedEffect{stream: s, msg: msg}, "stream message")
	}
}

// sendDown puts a message from the member on the wire to the client: it
// reaches a paused client when the pause ends.
func (w *world) sendDown(tr *etrans, now int64, eff stagedEffect, what string) {
	cl := tr.conn.c
	switch {
	case tr.dead:
		return
	case w.chance(faults.ReplyLost(w.plan.Network)):
		w.loseEtcd(tr, now, what+" lost")
		return
	case w.cut(cl.host, 0, false):
		w.loseEtcd(tr, now, "partitioned: "+what)
		return
	}
	w.hist.Messages++
	d := max(now+w.latency(cl, 0), tr.lastToCli, w.nodes[0].clogUntil)
	d = max(d, cl.pausedUntil(d), cl.heldUntil(d))
	tr.lastToCli = d
	eff.tr = tr
	w.push(&event{at: d, kind: evEtcdDown, eff: &eff})
}

// loseEtcd: a message was lost, and the connection with it: gRPC notices
// only when its keep-alive goes unanswered.
func (w *world) loseEtcd(tr *etrans, at int64, why string) {
	if tr.dead {
		return
	}
	tr.dead = true
	w.note(at, fmt.Sprintf("%s's connection %d lost: %s", tr.conn.c.name, tr.gen, why))
	if d := w.lock.keepAliveDetect(); d > 0 {
		w.push(&event{at: at + int64(d), kind: evEtcdDetect, etr: tr})
	}
}

// breakEtcd fails a connection: everything pending on it ends Unavailable.
func (w *world) breakEtcd(tr *etrans, at int64, why, msg string) {
	if tr.dead && why != "keep-alive unanswered" {
		return
	}
	tr.dead = true
	w.note(at, fmt.Sprintf("%s's connection %d fails: %s", tr.conn.c.name, tr.gen, why))
	w.staged = append(w.staged, stagedEffect{tr: tr, err: &etcdnode.Error{Code: codeUnavailable, Msg: msg}, broken: true})
}

// applyEtcd makes a staged etcd change under its connection's lock.
func applyEtcd(s stagedEffect) {
	e := s.tr.conn
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case s.broken:
		if s.tr.broken == nil {
			s.tr.broken = s.err
			if !s.tr.answered && !e.w.over.Load() {
				// The connection failed before the member answered:
				// gRPC waits out its backoff before the next attempt.
				e.failedDials++
				e.readyAt = e.w.now() + dialBackoff(e.failedDials, e.jitter)
			}
			for _, c := range s.tr.calls {
				if c.resp == nil && c.err == nil {
					c.err = s.err
				}
			}
			for _, st := range s.tr.streams {
				if st.err == nil {
					st.err = s.err
				}
			}
		}
	case s.call != nil:
		s.tr.answered, e.failedDials = true, 0
		s.call.resp, s.call.err = s.resp, s.err
		s.tr.calls = slices.DeleteFunc(s.tr.calls, func(c *ecall) bool { return c == s.call })
	case s.stream != nil && s.eof:
		if s.stream.err == nil {
			s.stream.err = io.EOF
		}
	case s.stream != nil:
		s.tr.answered, e.failedDials = true, 0
		s.stream.out = append(s.stream.out, s.msg)
	}
}

// wakeEtcd wakes whoever waits on a staged etcd change.
func wakeEtcd(s stagedEffect) {
	switch {
	case s.broken:
		s.tr.conn.mu.Lock()
		calls, streams := slices.Clone(s.tr.calls), slices.Clone(s.tr.streams)
		s.tr.calls = nil
		s.tr.conn.mu.Unlock()
		for _, c := range calls {
			c.done <- struct{}{}
		}
		for _, st := range streams {
			st.signal()
		}
	case s.call != nil:
		s.call.done <- struct{}{}
	case s.stream != nil:
		s.stream.signal()
	}
}

// expireLeases is the member's lessor loop: every ExpiryCheckPeriod it
// revokes the leases that expired.
func (w *world) expireLeases(now int64) {
	n := w.nodes[0]
	if n.down == 0 {
		for _, x := range n.member.ExpireDue(int64(n.memberClock(now))) {
			w.note(now, fmt.Sprintf("lease %x expired: revoked at revision %d", x.LeaseID, x.Revision))
			w.leaseEnded(x.LeaseID, now)
		}
		w.deliverMember(now)
	}
	if next := now + int64(etcdnode.ExpiryCheckPeriod); next < w.end {
		w.push(&event{at: next, kind: evExpiry})
	}
}

// noteEtcd hashes one message the member answered or sent, and traces it.
func (w *world) noteEtcd(at int64, tr *etrans, req []byte, resp any, err error) {
	what := fmt.Sprintf("%s#%d %s => %s", tr.conn.c.name, tr.gen, req, etcdText(resp, err))
	w.note(at, what)
}

func etcdText(resp any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Sprintf("%T", resp)
	}
	return string(b)
}

// crashEtcd: the member's host crashed. Its connections are reset at once
// (the host's kernel answers), or, when it stops answering, go silent.
func (w *world) crashEtcd(now int64, blackHole bool) {
	for _, tr := range w.etrs {
		if blackHole {
			w.loseEtcd(tr, now, "member stopped answering")
		} else {
			w.breakEtcd(tr, now, "member crashed", "connection reset by peer")
		}
	}
}

// restartNode restarts a node's store after its crash: a Redis node's
// keyspace, or the etcd member (which keeps every acknowledged write unless
// its disk was lost).
func (w *world) restartNode(n *node, now int64) {
	if n.member == nil {
		n.store.Restart(n.wipe)
		return
	}
	if n.wipe {
		for _, l := range w.leases {
			w.leaseEnded(l.id, now)
		}
		n.member.Wipe(int64(n.memberClock(now)))
	} else {
		n.member.Restart(int64(n.memberClock(now)))
	}
	clear(w.estreams)
}

// memberClock is the member's monotonic clock at true time t: its offset
// and drift, never its wall clock's steps (etcd's lessor uses
// time.Now's monotonic reading).
func (n *node) memberClock(t int64) reading {
	return reading(nodeEpoch + t + n.offset + faults.DriftAt(n.driftPPM, t))
}

// leaseLife is one lease the member granted a client: when, and when it
// ended (0: it lasted the run).
type leaseLife struct {
	id      int64
	client  int
	granted int64
	ended   int64
}

// trackLease records the leases granted and revoked through calls.
func (w *world) trackLease(client int, req, resp any, err error, now int64) {
	if err != nil {
		return
	}
	switch r := req.(type) {
	case *etcdnode.LeaseGrantRequest:
		w.leases = append(w.leases, leaseLife{id: resp.(*etcdnode.LeaseGrantResponse).ID, client: client, granted: now})
	case *etcdnode.LeaseRevokeRequest:
		w.leaseEnded(r.ID, now)
	}
}

func (w *world) leaseEnded(id, now int64) {
	for i := range w.leases {
		if l := &w.leases[i]; l.id == id && l.ended == 0 {
			l.ended = now
		}
	}
}

// markLeaseLapses tells the judge which grants the member ended while
// they were held: a grant given while the client's newest lease was alive,
// a lease that ended later in the run, gets that end as its validity's
// (model.Event.LeaseLapsed). A lock on etcd holds only while its lease
// lives (etcd's documentation: a session's lease), so a holder that uses
// the resource after the member ended its lease has outlived its grant, as
// one past its validity has (UseWithinValidity); a grant given after the
// lease had ended is the lock's own fault, and gets none. "Given" is when
// the member served the client's last call before the grant: the lock
// cannot know more than its last answer, and a lease that ends while that
// answer travels ended during the hold.
func (w *world) markLeaseLapses() {
	for _, c := range w.clients {
		for i := range c.events {
			e := &c.events[i]
			if e.Kind != model.AcquireReturn || !e.Granted {
				continue
			}
			given := e.Time
			if i := slices.IndexFunc(w.served[c.idx], func(t int64) bool { return t > e.Time }); i > 0 {
				given = w.served[c.idx][i-1]
			} else if i < 0 && len(w.served[c.idx]) > 0 {
				given = w.served[c.idx][len(w.served[c.idx])-1]
			}
			l, ok := w.newestLease(c.idx, given)
			if ok && l.ended > given && (e.ValidUntilTrue == 0 || l.ended < e.ValidUntilTrue) {
				e.ValidUntilTrue, e.LeaseLapsed = l.ended, true
			}
		}
	}
}

// newestLease is the last lease granted to client at or before t.
func (w *world) newestLease(client int, t int64) (leaseLife, bool) {
	var last leaseLife
	found := false
	for _, l := range w.leases {
		if l.client == client && l.granted <= t {
			last, found = l, true
		}
	}
	return last, found
}
