package realredis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// chance draws true with probability ppm per million, from the network
// stream (the coordinator's, in its own order).
func (w *world) chance(ppm faults.PPM) bool {
	return ppm > 0 && w.net.Uint32N(1_000_000) < uint32(ppm)
}

func (w *world) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(w.net.Uint64N(uint64(hi-lo+1)))
}

// latency draws one message's one-way delay between client c's host and
// node n (n < 0: the resource), as the kernel's network does: uniform, a
// tail for 1%, the plan's extra latency, the config's slow link.
func (w *world) latency(c *client, n int) int64 {
	d := w.between(int64(w.cfg.LatencyMin), int64(w.cfg.LatencyMax))
	if w.cfg.LatencyTail > 0 && w.net.Uint32N(1_000_000) < 10_000 {
		d += w.between(0, int64(w.cfg.LatencyTail))
	}
	if n >= 0 {
		if x := int64(w.plan.Network.ExtraLatencyMax); x > 0 {
			d += w.between(0, x)
		}
		if w.cfg.SlowExtra > 0 && c.host == w.cfg.SlowHost && (w.cfg.SlowNode < 0 || w.cfg.SlowNode == n) {
			d += w.between(0, int64(w.cfg.SlowExtra))
		}
	}
	return d
}

// cut reports whether an active partition drops a message between host h
// and node n, in the direction given.
func (w *world) cut(h, n int, toNode bool) bool {
	for _, p := range w.parts {
		hostIn, nodeIn := p.hosts&(1<<uint(h)) != 0, p.nodes&(1<<uint(n)) != 0
		if hostIn == nodeIn {
			continue
		}
		fromIn := hostIn
		if !toNode {
			fromIn = nodeIn
		}
		if fromIn || !p.oneWay {
			return true
		}
	}
	return false
}

// lose marks a connection dead: a message on it was lost, and TCP will not
// recover the stream before the client's timeout gives up on it.
func (w *world) lose(c *conn, at int64, why string) {
	if !c.dead {
		c.dead = true
		w.note(at, fmt.Sprintf("%s->n%d connection lost: %s", c.cl().name, c.node, why))
	}
}

func (c *conn) cl() *client { return c.w.clients[c.client] }

// sendRequest puts one request on the wire at true time at.
func (w *world) sendRequest(c *conn, args [][]byte, at int64) {
	if w.ended {
		return
	}
	w.hist.Messages++
	w.requests++
	cl := c.cl()
	if c.dead {
		return
	}
	held := at
	at = w.pauseBefore(cl, at, args)
	held = at - held
	if cl.pausedUntil(at) > at {
		// A paused process sends nothing. Its library's goroutines run
		// on (a bubble cannot stop one client's clock): what they send
		// while it is paused is never sent.
		w.lose(c, at, "client paused: "+quote(args))
		return
	}
	switch {
	case w.chance(w.plan.Network.LossPPM):
		w.lose(c, at, "request lost: "+quote(args))
		return
	case w.cut(cl.host, c.node, true):
		w.lose(c, at, "partitioned: "+quote(args))
		return
	}
	d := max(at+w.latency(cl, c.node), c.lastToNode)
	d = max(d, w.nodes[c.node].clogUntil)
	c.lastToNode = d
	w.push(&event{at: d, kind: evRequest, conn: c, args: args, paused: held > 0})
}

// deliver applies a request on its node and sends the reply back.
func (w *world) deliver(e *event, now int64) {
	c, n := e.conn, w.nodes[e.conn.node]
	cl := c.cl()
	if c.dead {
		return
	}
	if e.paused {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			// The process was paused before sending it, but its library's
			// timers ran on and it gave the call up: it is never sent.
			w.lose(c, now, "never sent: given up during the client's pause: "+quote(e.args))
			return
		}
	}
	if n.down > 0 {
		if n.blackHole > 0 {
			w.lose(c, now, "node down, not answering")
		} else {
			w.resetConn(c, now, "node down")
		}
		return
	}
	if n.clogUntil > now {
		w.push(&event{at: n.clogUntil, kind: evRequest, conn: c, args: e.args})
		return
	}
	r := n.store.Do(int64(n.local(now)), e.args)
	if r.Kind == 0 {
		panic("realredis: node returned no reply")
	}
	reply := r.AppendRESP2(nil)
	w.noteApplied(now, c, e.args, reply, r)
	switch {
	case w.chance(faults.ReplyLost(w.plan.Network)):
		w.lose(c, now, "reply lost after apply")
		return
	case w.cut(cl.host, c.node, false):
		w.lose(c, now, "partitioned: reply")
		return
	}
	w.hist.Messages++
	d := max(now+w.latency(cl, c.node), c.lastToCli)
	d = max(d, n.clogUntil)
	d = max(d, cl.pausedUntil(d))
	c.lastToCli = d
	w.push(&event{at: d, kind: evReply, conn: c, data: reply})
}

func (w *world) resetConn(c *conn, at int64, why string) {
	if c.dead {
		return
	}
	c.dead = true
	c.cl().trouble = at
	w.staged = append(w.staged, stagedEffect{conn: c, reset: true})
	w.note(at, fmt.Sprintf("%s->n%d connection reset: %s", c.cl().name, c.node, why))
}

// dial answers a client's dial: a connection if the node is up and
// reachable; refused if it is down; no answer (the dialer's context ends
// it) if it is down without answering or partitioned away.
func (w *world) dial(it inboxItem) {
	n, cl, now := w.nodes[it.node], w.clients[it.client], w.now()
	switch {
	case w.ended:
		w.staged = append(w.staged, stagedEffect{dial: it.dial, dr: dialResult{err: errRefuse}})
		return
	case n.down > 0 && n.blackHole == 0:
		cl.trouble = now
		w.note(now, fmt.Sprintf("%s dials n%d: refused (down)", cl.name, it.node))
		w.staged = append(w.staged, stagedEffect{dial: it.dial, dr: dialResult{err: errRefuse}})
		return
	case n.down > 0 || w.cut(cl.host, it.node, true) || w.cut(cl.host, it.node, false):
		w.note(now, fmt.Sprintf("%s dials n%d: no answer", cl.name, it.node))
		cl.trouble = now
		w.noAnswer = append(w.noAnswer, unanswered{dial: it.dial, client: it.client, gone: it.dialGone})
		return
	}
	c := &conn{w: w, client: it.client, node: it.node, id: w.conns, notify: make(chan struct{}, 1)}
	w.conns++
	n.conns = append(n.conns, c)
	if w.starving() {
		cl.conns = append(cl.conns, c)
	}
	w.note(now, fmt.Sprintf("%s dials n%d: connected", cl.name, it.node))
	w.staged = append(w.staged, stagedEffect{dial: it.dial, dr: dialResult{c: c}})
}

// process runs one due event.
func (w *world) process(e *event) {
	now := e.at
	switch e.kind {
	case evRequest:
		w.deliver(e, now)
	case evReply:
		c := e.conn
		if c.dead {
			return
		}
		w.staged = append(w.staged, stagedEffect{conn: c, data: e.data, reply: true})
	case evFaultStart:
		w.startFault(e.idx, now)
	case evFaultEnd:
		w.endFault(e.idx, now)
	case evResource:
		w.resourceAccess(e.res, now)
	case evResourceReply:
		w.staged = append(w.staged, stagedEffect{res: e.res})
	case evEnd:
		w.note(now, "run ends")
		w.shutdown()
	case evEtcdUp:
		w.arrive(e.emsg, now)
	case evEtcdDown:
		if !e.eff.tr.dead {
			w.staged = append(w.staged, *e.eff)
		}
	case evEtcdDetect:
		w.breakEtcd(e.etr, now, "keep-alive unanswered", "transport is closing")
	case evExpiry:
		w.expireLeases(now)
	case evWatch:
		w.lookFree(e.idx, now)
	}
}

// scheduleFaults puts the plan's timed events on the queue.
func (w *world) scheduleFaults() {
	if 2*int64(w.cfg.LatencyMin) > int64(w.cfg.RPCTimeout) {
		// No round trip can come back within the client's timeout: as in
		// the kernel, such a network never heals. One where some come
		// back late is a lossy one, judged.
		w.healedAt(w.end)
	}
	for i, e := range w.plan.Events {
		at := int64(e.At)
		if at >= w.end {
			continue
		}
		w.healedAt(at)
		switch e.Kind {
		case faults.Crash, faults.Partition, faults.Clog:
			w.push(&event{at: at, kind: evFaultStart, idx: i})
			if e.For > 0 {
				w.push(&event{at: at + int64(e.For), kind: evFaultEnd, idx: i})
			} else {
				// It never heals: no liveness is owed after it (this mode
				// records no Reach, so liveness is judged after Healed).
				w.healedAt(w.end)
			}
		case faults.ClockJump:
			if e.Target == faults.NodeProcess {
				n := w.nodes[e.Index]
				n.jumps = append(n.jumps, jump{at, int64(e.Delta)})
				w.push(&event{at: at, kind: evFaultStart, idx: i})
			}
		case faults.Pause:
			w.push(&event{at: at, kind: evFaultStart, idx: i})
			if e.Point == "" {
				w.healedAt(at + int64(e.For))
			}
		}
		if e.For > 0 && e.Kind != faults.Pause {
			w.healedAt(at + int64(e.For))
		}
	}
}

func (w *world) healedAt(t int64) { w.hist.Healed = min(max(w.hist.Healed, t), w.end) }

func (w *world) startFault(i int, now int64) {
	w.lastFault = now
	e := w.plan.Events[i]
	switch e.Kind {
	case faults.Crash:
		n := w.nodes[e.Node]
		n.down++
		if e.BlackHole {
			n.blackHole++
		}
		if e.Wipe {
			n.wipe = true
		}
		w.note(now, fmt.Sprintf("n%d crashes%s%s", e.Node, map[bool]string{true: ", losing its data"}[e.Wipe], map[bool]string{true: ", not answering"}[e.BlackHole]))
		for _, c := range n.conns {
			if e.BlackHole {
				c.dead = true
			} else {
				w.resetConn(c, now, "node crashed")
			}
		}
		n.conns = nil
		if n.member != nil {
			w.crashEtcd(now, e.BlackHole)
		}
	case faults.Partition:
		p := partition{id: i, oneWay: e.OneWay}
		for _, x := range e.Nodes {
			p.nodes |= 1 << uint(x)
		}
		for _, h := range e.Hosts {
			p.hosts |= 1 << uint(h)
		}
		w.parts = append(w.parts, p)
		w.note(now, fmt.Sprintf("partition %v|%v starts", e.Nodes, e.Hosts))
	case faults.Clog:
		n := w.nodes[e.Node]
		n.clogUntil = max(n.clogUntil, now+int64(e.For))
		w.note(now, fmt.Sprintf("n%d clogged for %s", e.Node, e.For))
	case faults.ClockJump:
		n := w.nodes[e.Index]
		if n.member != nil {
			// etcd times leases on the monotonic clock: a step of the
			// wall clock changes nothing (memberClock ignores jumps).
			w.note(now, fmt.Sprintf("n%d wall clock jumps %s: etcd's leases do not see it", e.Index, e.Delta))
			return
		}
		// Redis's active expiry has removed what expired before the step
		// (a step back must not bring those keys back).
		n.store.ExpireCycle(int64(n.local(now - 1)))
		w.note(now, fmt.Sprintf("n%d clock jumps %s", e.Index, e.Delta))
	case faults.Pause:
		if e.Point != "" {
			cl := w.clients[e.Client]
			cl.pendingPause = append(cl.pendingPause, pendingPause{point: e.Point, d: int64(e.For)})
		} else {
			w.hist.Pauses = append(w.hist.Pauses, model.PointPause{Client: e.Client, Time: now, For: int64(e.For), Point: "timed"})
			w.note(now, fmt.Sprintf("%s paused for %s", w.clients[e.Client].name, e.For))
		}
	}
}

func (w *world) endFault(i int, now int64) {
	w.lastFault = now
	e := w.plan.Events[i]
	switch e.Kind {
	case faults.Crash:
		n := w.nodes[e.Node]
		n.down--
		if e.BlackHole {
			n.blackHole--
		}
		if n.down == 0 && w.quarantine && !n.quarantined {
			// The deployment delays a restart by one TTL (Redlock's
			// delayed restarts): the node stays down that much longer.
			n.down, n.quarantined = 1, true
			if e.BlackHole {
				n.blackHole++
			}
			w.note(now, fmt.Sprintf("n%d stays down for its quarantine (%s)", e.Node, w.cfg.TTL))
			w.push(&event{at: now + int64(w.cfg.TTL), kind: evFaultEnd, idx: i})
			return
		}
		if n.down == 0 {
			n.quarantined = false
			w.restartNode(n, now)
			w.hist.Restarts = append(w.hist.Restarts, model.Restart{Node: e.Node, Time: now, Empty: n.wipe})
			w.note(now, fmt.Sprintf("n%d restarts%s", e.Node, map[bool]string{true: " empty"}[n.wipe]))
			n.wipe = false
		}
	case faults.Partition:
		w.parts = slices.DeleteFunc(w.parts, func(p partition) bool { return p.id == i })
		w.note(now, "partition heals")
	}
}

type pendingPause struct {
	point faults.Point
	d     int64
}

// pauseBefore strikes a pause that waits for a call inside Lock (or, for
// before-delete, inside Unlock): the client stops before sending it.
func (w *world) pauseBefore(cl *client, at int64, args [][]byte) int64 {
	d := w.strikePause(cl, at, func() string { return strings.ToUpper(string(args[0])) })
	return at + d
}

// strikePause takes the client's next pending fault-point pause if it
// waits for a message sent now (inside Lock for in-acquire, inside Unlock
// for before-delete), records it and returns its length; 0 when none
// strikes. what names the message, for the trace.
func (w *world) strikePause(cl *client, at int64, what func() string) int64 {
	if len(cl.pendingPause) == 0 {
		return 0
	}
	cl.mu.Lock()
	op := cl.op
	cl.mu.Unlock()
	p := cl.pendingPause[0]
	switch {
	case p.point == faults.InAcquire && op == model.AcquireCall:
	case p.point == faults.BeforeDelete && op == model.ReleaseCall:
	default:
		return 0
	}
	cl.pendingPause = cl.pendingPause[1:]
	w.hist.Pauses = append(w.hist.Pauses, model.PointPause{Client: cl.idx, Time: at, For: p.d, Point: string(p.point)})
	w.healedAt(at + p.d)
	w.note(at, fmt.Sprintf("%s pauses %s before %s", cl.name, model.Seconds(p.d), what()))
	return p.d
}
