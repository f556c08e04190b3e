package sim

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// workload is what every client thread does until the run ends (or it has
// had Config.Acquisitions grants): acquire; if granted, a critical section
// on the protected counter (read, think, write value+1); release; think;
// again.
func (p *process) workload() {
	for grants := 0; ; {
		g := p.acquire()
		if g.Granted {
			p.criticalSection(g)
			p.release(g)
			if grants++; grants == p.w.cfg.Acquisitions {
				return // the client has had its grants (Config.Acquisitions)
			}
		}
		p.sleep(p.w.between(Choice{Kind: ChoiceThink, Client: p.idx, Node: -1}, int64(p.w.cfg.ThinkMin), int64(p.w.cfg.ThinkMax)))
	}
}

func (p *process) acquire() algorithm.Grant {
	p.openOp, p.calls = model.AcquireCall, 0
	p.w.record(p, model.Event{Kind: model.AcquireCall})
	g := p.lock.Acquire(p, LockKey)
	p.openOp = 0
	ev := model.Event{Kind: model.AcquireReturn, Granted: g.Granted, Token: g.Token, HasToken: g.HasToken}
	if g.Granted {
		p.holding, p.beliefEnded = true, false
		p.holdID++
		p.validUntil, p.validLocal, p.grantEvent = 0, reading(g.ValidUntil), len(p.w.hist.Events)
		if g.ValidUntil != 0 {
			ev.ValidUntilTrue = p.scheduleValidity(reading(g.ValidUntil))
			p.validUntil = ev.ValidUntilTrue
		}
	}
	p.w.record(p, ev)
	if g.Granted && len(p.w.pendingMoves) > 0 {
		p.w.movePending() // a topology change that waited for a lock to be held
	}
	if g.Granted && ev.ValidUntilTrue != 0 && ev.ValidUntilTrue <= p.w.now {
		p.endBelief("expired") // granted with no validity left at all
	}
	return g
}

// scheduleValidity arranges for the belief to end when the host clock reads
// validUntil, and returns that instant in true time.
func (p *process) scheduleValidity(validUntil reading) int64 {
	at := p.w.hosts[p.host].clock.trueAt(validUntil, p.w.now)
	if at < 0 {
		return 0
	}
	if at > p.w.now {
		p.w.q.push(at, evValidity, int32(p.idx), p.holdID)
	}
	return at
}

// validityPassed is the validity deadline of hold holdID: the belief ends,
// unless the host's clock stepped back since the deadline was set (a
// jump injected mid-run, stepHost), which set a later one.
func (p *process) validityPassed(holdID uint64) {
	if p.holding && holdID == p.holdID && !p.beliefEnded && p.w.hosts[p.host].clock.local(p.w.now) >= p.validLocal {
		p.endBelief("expired")
	}
}

// stepHost steps host h's clock by delta now: a jump the plan did not
// hold (an Injector's). The validity deadlines of its holders move with
// it, and so does the true time their grants' validity ends, in the
// history: the run is as if the plan had held the jump all along.
func (w *world) stepHost(h int, delta int64) {
	c := &w.hosts[h].clock
	c.addJump(w.now, delta)
	for _, p := range w.clients {
		if p.host != h || !p.holding || p.beliefEnded || p.validUntil == 0 {
			continue
		}
		at := c.trueAt(p.validLocal, w.now)
		if at < 0 {
			continue // never, within 73 years: keep the deadline it had
		}
		p.validUntil = at
		w.hist.Events[p.grantEvent].ValidUntilTrue = at
		if at <= w.now {
			p.endBelief("expired")
			continue
		}
		w.q.push(at, evValidity, int32(p.idx), p.holdID)
	}
}

func (p *process) endBelief(reason string) {
	p.beliefEnded = true
	p.w.record(p, model.Event{Kind: model.BeliefEnd, Reason: reason})
}

// criticalSection reads the counter, thinks, and writes it back plus one,
// stopping as soon as the lock is no longer believed held. The fault point
// between the validity check and the write is where a pause hurts most.
func (p *process) criticalSection(g algorithm.Grant) {
	p.faultPoint(faults.AfterGrant)
	if p.beliefEnded {
		return
	}
	v, ok := p.resourceRPC(opResourceRead, g, 0)
	if !ok {
		return
	}
	p.sleep(p.w.between(Choice{Kind: ChoiceHold, Client: p.idx, Node: -1}, int64(p.w.cfg.HoldMin), int64(p.w.cfg.HoldMax)))
	if p.beliefEnded {
		return
	}
	p.faultPoint(faults.BetweenReadWrite)
	p.resourceRPC(opResourceWrite, g, v+1)
}

func (p *process) release(g algorithm.Grant) {
	p.faultPoint(faults.BeforeRelease)
	if !p.beliefEnded {
		p.endBelief("release")
	}
	p.holding = false
	p.openOp, p.calls = model.ReleaseCall, 0
	p.w.record(p, model.Event{Kind: model.ReleaseCall})
	p.lock.Release(p, LockKey, g)
	p.openOp = 0
	p.w.record(p, model.Event{Kind: model.ReleaseReturn})
}

// faultPoint pauses the client at a named place with the plan's probability:
// for PauseFor, or, when the plan sizes pauses by the validity, until only
// UntilValidityLeft of the hold's validity is left.
func (p *process) faultPoint(point faults.Point) {
	if p.w.inject != nil {
		p.offer(Step{Node: -1, Point: point})
	}
	pts := &p.w.plan.Points
	if !p.w.chance(Choice{Kind: ChoicePointPause, Client: p.idx, Node: -1, Point: point}, uint32(pts.PausePPM)) {
		return
	}
	d := int64(pts.PauseFor)
	if pts.UntilValidityLeft != 0 && p.holding && p.validUntil != 0 {
		d = p.validUntil - p.w.now - int64(pts.UntilValidityLeft)
	}
	if d <= 0 {
		return // too little validity left to pause before its edge
	}
	if p.w.tracing {
		p.w.note("%s: pause %s at %s", p.name, fmtTime(d), point)
	}
	p.w.hist.Pauses = append(p.w.hist.Pauses, model.PointPause{Client: p.idx, Time: p.w.now, For: d, Point: string(point)})
	p.sleep(d)
}

// acquirePauseStrikePPM is the chance that a timed pause waiting for a
// server call inside Acquire strikes at a given one: so that it comes
// between any two calls, after the first writes as well as before them.
const acquirePauseStrikePPM = 333_333

// pauseAt takes the timed pause *pending that waited for a place inside
// Acquire (a server call, or a delete). It heals when it ends, which may be
// after the plan's At + For: liveness is judged from then on.
func (p *process) pauseAt(pending *int64, point faults.Point) {
	w := p.w
	d := *pending
	*pending = 0
	if w.tracing {
		w.note("%s: pause %s at %s", p.name, fmtTime(d), point)
	}
	w.hist.Pauses = append(w.hist.Pauses, model.PointPause{Client: p.idx, Time: w.now, For: d, Point: string(point)})
	w.hist.Healed = min(max(w.hist.Healed, w.now+d), w.end)
	p.sleep(d)
}

// resourceRPC accesses the protected resource: a reliable register reached
// over the network (no loss, normal latency), which checks fencing tokens
// when the variant is fenced.
func (p *process) resourceRPC(o op, g algorithm.Grant, value int64) (int64, bool) {
	p.step()
	p.call++
	p.res, p.deadline = nil, 0 // the resource is reliable: no timeout
	i := p.w.newMsg()
	m := &p.w.msgs[i]
	m.from, m.to, m.call, m.isReply = clientEndpoint(p.idx), resourceEndpoint, p.call, false
	m.req = request{op: o}
	m.resToken, m.resValue, m.sentAt = g.Token, value, p.w.now
	p.w.send(i)
	p.block()
	return int64(p.res.counter), p.res.err == errNone
}

// resource is the protected counter.
type resource struct {
	value int64
	fence Fence
}

// Fence is a fenced resource's token check: it lets in an access whose
// token is at least the newest it has let in, and refuses one below it.
// The kernel's resource and the coordinator's for unmodified locks
// (sim/realredis) both check tokens with it.
type Fence struct{ highest uint64 }

// Admit reports whether an access with token gets in, and remembers it.
func (f *Fence) Admit(token uint64) bool {
	if token < f.highest {
		return false
	}
	f.highest = token
	return true
}

// resourceAccess serves resource request m, in slot i.
func (w *world) resourceAccess(m *message, i int32) {
	r := &w.resource
	accepted := !w.fenced || r.fence.Admit(m.resToken)
	p := w.clients[m.from.client()]
	ev := model.Event{Kind: model.ResourceRead, Token: m.resToken, HasToken: w.fenced, Accepted: accepted, Sent: m.sentAt}
	if m.req.op == opResourceWrite {
		ev.Kind = model.ResourceWrite
		ev.Value = m.resValue
		if accepted {
			r.value = m.resValue
		}
	} else if accepted {
		ev.Value = r.value
	}
	m.rep = reply{counter: uint64(ev.Value)} // the protected counter's value (never negative)
	if !accepted {
		m.rep.err = errNotOwner
	}
	w.record(p, ev)
	if w.tracing {
		w.note("resource %s by %s token=%d value=%d accepted=%v", m.req.op, p.name, m.resToken, ev.Value, accepted)
	}
	w.turnAround(m, i)
}
