package sim

import "github.com/locksim/locksim/model"

// An endpoint is a node (index >= 0), a client (-1-index), or the protected
// resource.
type endpoint int32

const resourceEndpoint endpoint = 1 << 30

func clientEndpoint(c int) endpoint { return endpoint(-1 - c) }
func (e endpoint) isClient() bool   { return e < 0 }
func (e endpoint) client() int      { return int(-1 - e) }

// message is a request or a reply in flight. Messages live in a slab
// (world.msgs) and events refer to them by index, so sending allocates
// nothing once the slab has grown.
type message struct {
	from, to endpoint
	call     uint64 // the client's RPC id; replies carry it back
	isReply  bool
	req      request
	rep      reply
	// resource accesses
	resToken uint64
	resValue int64
	sentAt   int64 // true time the client sent the access
}

// partition cuts a group (nodes and hosts, as bitmasks) from everyone else.
type partition struct {
	id     int // plan event index
	nodes  uint64
	hosts  uint64
	oneWay bool // only messages leaving the group are cut
}

func (w *world) member(p *partition, e endpoint) bool {
	switch {
	case e == resourceEndpoint:
		return false
	case e.isClient():
		return p.hosts&(1<<uint(w.clients[e.client()].host)) != 0
	default:
		return p.nodes&(1<<uint(e)) != 0
	}
}

// cut reports whether an active partition drops a message from -> to.
func (w *world) cut(from, to endpoint) bool {
	for i := range w.parts {
		p := &w.parts[i]
		in, out := w.member(p, from), w.member(p, to)
		if in && !out {
			return true
		}
		if !p.oneWay && !in && out {
			return true
		}
	}
	return false
}

// latency draws message m's one-way delay. Without a Chooser it draws
// from the network stream directly, over ranges worked out once a run
// (netSpans): one call where the general path makes three a draw. Both
// draw exactly the same numbers (a test runs both on every seed it sweeps).
func (w *world) latency(m *message) int64 {
	if w.choose != nil || !w.spans.ok {
		return w.chosenLatency(m)
	}
	r, sp := &w.netRand, &w.spans
	d := int64(w.cfg.LatencyMin)
	if sp.latency > 0 {
		d += int64(r.uint64n(sp.latency))
	}
	if sp.tail > 0 && chance(r, tailPPM) {
		d += int64(r.uint64n(sp.tail))
	}
	if sp.extra > 0 {
		d += int64(r.uint64n(sp.extra))
	}
	return d
}

// chosenLatency is latency through the choice points: the Chooser's answer
// to each, or the seed's streams when netSpans could not fit a range.
func (w *world) chosenLatency(m *message) int64 {
	d := w.netBetween(ChoiceLatency, m, int64(w.cfg.LatencyMin), int64(w.cfg.LatencyMax))
	if w.cfg.LatencyTail > 0 && w.netChance(ChoiceTail, m, tailPPM) {
		d += w.netBetween(ChoiceTailDelay, m, 0, int64(w.cfg.LatencyTail))
	}
	if x := int64(w.plan.Network.ExtraLatencyMax); x > 0 {
		d += w.netBetween(ChoiceExtraLatency, m, 0, x)
	}
	return d
}

// netSpans are the sizes of latency's ranges, n = hi-lo+1 for between's
// draw, or 0 where between would not draw (hi <= lo). ok is false when a
// range overflows, which between reports. quiet says send has no chance to
// ask: no loss, reply loss or duplication in the plan, and no Chooser,
// which may make them happen anyway.
type netSpans struct {
	ok, quiet            bool
	latency, tail, extra uint64
}

// tailPPM is the share of messages in the latency tail: 1%.
const tailPPM = 10_000

func (w *world) netSpans() netSpans {
	lat, ok1 := spanOf(int64(w.cfg.LatencyMin), int64(w.cfg.LatencyMax))
	tail, ok2 := spanOf(0, int64(w.cfg.LatencyTail))
	extra, ok3 := spanOf(0, int64(w.plan.Network.ExtraLatencyMax))
	net := &w.plan.Network
	quiet := w.choose == nil && net.LossPPM == 0 && net.ReplyLossPPM == 0 && net.DuplicatePPM == 0
	return netSpans{ok: ok1 && ok2 && ok3, quiet: quiet, latency: lat, tail: tail, extra: extra}
}

// slowness is the extra delay of message m on the config's slow link
// (SlowExtra), drawn from the network stream; 0 elsewhere, without a draw.
// It inlines, so a world with no slow link (most) makes no call.
func (w *world) slowness(m *message) int64 {
	if w.cfg.SlowExtra <= 0 {
		return 0
	}
	return w.slowLink(m)
}

// slowLink is slowness where the config has a slow link.
func (w *world) slowLink(m *message) int64 {
	c, n := m.from, m.to
	if !c.isClient() {
		c, n = n, c
	}
	if !c.isClient() || n.isClient() || n == resourceEndpoint || w.clients[c.client()].host != w.cfg.SlowHost {
		return 0
	}
	if w.cfg.SlowNode >= 0 && int(n) != w.cfg.SlowNode {
		return 0
	}
	return w.netBetween(ChoiceSlow, m, 0, int64(w.cfg.SlowExtra))
}

// newMsg takes a slab slot for a message the caller then fills in: the
// most recently freed slot first, else a new one at the end. A slot is
// reused as it is, so the fields of the other kind of message (a request's
// reply, a reply's request) may be stale: read only those of m's kind.
func (w *world) newMsg() int32 {
	if n := len(w.freeMsgs); n > 0 {
		i := w.freeMsgs[n-1]
		w.freeMsgs = w.freeMsgs[:n-1]
		return i
	}
	w.msgs = append(w.msgs, message{})
	return int32(len(w.msgs) - 1)
}

func (w *world) freeMsg(i int32) { w.freeMsgs = append(w.freeMsgs, i) }

// send puts message i on the network: partitions, loss, reply loss and
// duplication are decided here, at send time, from the network stream.
//
// A dropped message's slot is freed at once. That leaves the slab as if the
// message had never taken it: the slot was the most recently freed one,
// and goes back on top of the free list, or it was new at the end, and the
// next newMsg hands it out again, as it would have appended it. So every
// later message gets the slot index it always got (the trace hash mixes it).
func (w *world) send(i int32) {
	w.hist.Messages++
	m := &w.msgs[i]
	if m.from == resourceEndpoint || m.to == resourceEndpoint {
		w.q.push(w.now+w.latency(m), evDeliver, i, 0)
		return
	}
	m.sentAt = w.now // a duplicate keeps it: the time its client sent it
	if w.spans.quiet && len(w.parts) == 0 {
		// Nothing can drop or duplicate it: no draw to make, no check.
		w.q.push(w.now+w.latency(m)+w.slowness(m), evDeliver, i, 0)
		return
	}
	net := &w.plan.Network
	switch {
	case len(w.parts) > 0 && w.cut(m.from, m.to): // no call while nothing is partitioned
		w.drop(i, "partition")
		return
	case w.netChance(ChoiceLoss, m, uint32(net.LossPPM)):
		w.drop(i, "loss")
		return
	case m.isReply && w.netChance(ChoiceReplyLoss, m, uint32(net.ReplyLossPPM)):
		w.drop(i, "reply lost after apply")
		return
	}
	w.q.push(w.now+w.latency(m)+w.slowness(m), evDeliver, i, 0)
	if w.netChance(ChoiceDuplicate, m, uint32(net.DuplicatePPM)) {
		w.duplicate(i)
	}
}

// drop frees message i's slot, which send decided not to deliver. It is
// out of send, with the tracing, so that send stays small.
func (w *world) drop(i int32, why string) {
	if w.tracing {
		w.note("drop %s (%s)", w.describe(&w.msgs[i]), why)
	}
	w.freeMsg(i)
}

// duplicate delivers a copy of message i, in its own slot.
func (w *world) duplicate(i int32) {
	if w.tracing {
		w.note("duplicate %s", w.describe(&w.msgs[i]))
	}
	d := w.newMsg() // may grow the slab
	w.msgs[d] = w.msgs[i]
	w.q.push(w.now+w.latency(&w.msgs[d])+w.slowness(&w.msgs[d]), evDeliver, d, 0)
}

// deliver hands message i to its destination. The message is used in place:
// a reply's slot is freed before the client reads it (nothing is sent in
// between), and a node or the resource answers in the request's own slot
// (see nodeStep).
func (w *world) deliver(i int32) {
	m := &w.msgs[i]
	switch {
	case m.to == resourceEndpoint:
		w.resourceAccess(m, i)
	case m.to.isClient():
		w.freeMsg(i)
		w.clients[m.to.client()].replyArrived(m.call, &m.rep)
	default:
		n := &w.nodes[m.to]
		if w.now < n.clogUntil {
			// A clogged node holds messages back; the message keeps its slot.
			w.q.push(n.clogUntil, evDeliver, i, 0)
			return
		}
		w.nodeStep(int(m.to), m, i)
	}
}

// turnAround makes request m, in slot i, a reply in place (its handler has
// written m.rep) and sends it. Taking the request's slot is what freeing it and
// taking a new one would do: the request's slot would be the most recently
// freed.
func (w *world) turnAround(m *message, i int32) {
	m.from, m.to, m.isReply = m.to, m.from, true
	w.send(i)
}

// nodeStep is a node's state machine: one request in (m, in slot i), one
// reply out.
func (w *world) nodeStep(ni int, m *message, i int32) {
	n := &w.nodes[ni]
	switch {
	case !n.up && n.blackHoles > 0:
		if w.tracing {
			w.note("%s drops %s (down, no answer)", n.name, w.describe(m))
		}
		w.freeMsg(i) // as a message dropped at send: see send
		return
	case !n.up:
		m.rep = reply{err: errServerDown} // a crashed node's host refuses at once
		if w.tracing {
			w.note("%s refuses %s (down)", n.name, w.describe(m))
		}
	case w.quarantine && n.restarted && w.now < n.restartAt+int64(w.cfg.TTL) && m.req.op.isWrite():
		m.rep = reply{err: errServerDown}
		if w.tracing {
			w.note("%s refuses %s (quarantine after restart)", n.name, w.describe(m))
		}
	default:
		n.store.by, n.store.byAt = int32(m.from.client()), m.sentAt
		var prev model.ItemLife // the stay a rewrite by its owner ends (Scenario.Items)
		if w.items {
			prev = w.itemBefore(n, m)
		}
		n.store.apply(&m.req, n.clock.local(w.now), &m.rep)
		w.mix(uint64(ni), uint64(m.req.op), uint64(m.rep.err), m.rep.item.Version)
		if m.rep.err == errNone && (m.req.op == opWriteIfAbsentOrSame || m.req.op == opSetIfAbsentTTL || m.req.op == opCreateWithLease) {
			w.itemWritten(n, m)
			if prev.Owner != "" {
				prev.To, prev.How, prev.By, prev.Sent = w.now, "rewritten", int(n.store.by), m.sentAt
				w.hist.Items = append(w.hist.Items, prev)
			}
		}
		if w.tracing {
			w.note("%s applies %s -> %s", n.name, w.describe(m), describeReply(m.rep))
		}
	}
	w.turnAround(m, i)
}
