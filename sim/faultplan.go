package sim

import (
	"fmt"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// applyClocks sets every process clock from the plan before the run starts.
// Jumps are known in advance so clocks can be inverted (validity deadlines).
func (w *world) applyClocks() {
	for _, z := range w.plan.Zones {
		w.hosts[z.Host].zone = zone{offset: int64(z.Offset), shiftAt: int64(z.ShiftAt), shift: int64(z.Shift)}
	}
	for _, c := range w.plan.Clocks {
		k := w.clockOf(c.Kind, c.Index)
		k.offset, k.driftPPM = int64(c.Offset), c.DriftPPM
	}
	for _, e := range w.plan.Events {
		if e.Kind == faults.ClockJump {
			w.clockOf(e.Target, e.Index).addJump(int64(e.At), int64(e.Delta))
		}
	}
}

func (w *world) clockOf(kind faults.ProcessKind, i int) *clock {
	if kind == faults.NodeProcess {
		return &w.nodes[i].clock
	}
	return &w.hosts[i].clock
}

// healedAt is when the last timed fault ends: liveness is judged after it.
// Steady loss, duplication, reply loss and steady extra latency leave every
// attempt a fair chance, so they do not stop the clock: a reply later than
// the RPC timeout is a lost one, and a variant that needs loss bounded says
// so in its envelope (the harness then judges the late share as loss). Only
// a network in which no round trip can come back in time never heals.
func (w *world) healedAt() int64 {
	if w.neverInTime() {
		return w.end
	}
	var healed int64
	for _, e := range w.plan.Events {
		end := int64(e.At)
		switch e.Kind {
		case faults.Crash, faults.Partition, faults.Clog, faults.Pause:
			if e.For == 0 && e.Kind == faults.Crash {
				end = w.end // never restarts
			} else {
				end += int64(e.For)
			}
		case faults.Topology:
			// Healed once every client knows of the change, and of its end
			// if it has one.
			end += int64(e.For) + int64(e.Spread)
		}
		healed = max(healed, end)
	}
	return min(healed, w.end)
}

// neverInTime reports whether no round trip can come back within the RPC
// timeout, even at the least latency the world and the plan draw: then no
// algorithm could be live, and liveness is not judged.
//
// It once held whenever a round trip could outlast the timeout (the plan's
// extra latency at its worst): liveness was then off for the whole run,
// and a lock that never granted passed 11 of 20 default seeds.
func (w *world) neverInTime() bool {
	return 2*int64(w.cfg.LatencyMin) > int64(w.cfg.RPCTimeout)
}

func (w *world) startFault(i int) {
	e := &w.plan.Events[i]
	w.mix(uint64(i), uint64(len(e.Kind)), uint64(e.Node), uint64(e.For))
	switch e.Kind {
	case faults.Crash:
		// Crash windows on one node may overlap: the node is down while any
		// is open, and a wiping crash loses the data when it happens.
		n := &w.nodes[e.Node]
		n.up = false
		n.crashes++
		if e.BlackHole {
			n.blackHoles++
		}
		if e.Wipe {
			n.store.wipe()
			n.wiped = true
		}
		hole := ""
		if e.BlackHole {
			hole = ", a black hole: no answers"
		}
		w.note("!! crash %s (wipe=%v%s) for %s", n.name, e.Wipe, hole, fmtTime(int64(e.For)))
		if e.For > 0 {
			w.q.push(w.now+int64(e.For), evFaultEnd, int32(i), 0)
		}
	case faults.Partition:
		p := partition{id: i, oneWay: e.OneWay}
		for _, n := range e.Nodes {
			p.nodes |= 1 << uint(n)
		}
		for _, h := range e.Hosts {
			p.hosts |= 1 << uint(h)
		}
		w.parts = append(w.parts, p)
		w.note("!! partition nodes=%v hosts=%v one-way=%v for %s", e.Nodes, e.Hosts, e.OneWay, fmtTime(int64(e.For)))
		w.q.push(w.now+int64(e.For), evFaultEnd, int32(i), 0)
	case faults.Clog:
		n := &w.nodes[e.Node]
		n.clogUntil = max(n.clogUntil, w.now+int64(e.For))
		w.note("!! clog %s for %s", n.name, fmtTime(int64(e.For)))
	case faults.ClockJump:
		w.note("!! clock of %s %d jumps by %s", e.Target, e.Index, fmtSigned(int64(e.Delta)))
	case faults.Pause:
		p := w.clients[e.Client]
		if e.Point == faults.InAcquire {
			// Strikes before one of the client's next server calls inside Acquire.
			w.note("!! pause %s for %s at its next call inside acquire", p.name, fmtTime(int64(e.For)))
			p.acquirePause = max(p.acquirePause, int64(e.For))
			return
		}
		if e.Point == faults.BeforeDelete {
			// Strikes before the client's next delete inside Acquire.
			w.note("!! pause %s for %s at its next delete inside acquire", p.name, fmtTime(int64(e.For)))
			p.deletePause = max(p.deletePause, int64(e.For))
			return
		}
		w.note("!! pause %s for %s", p.name, fmtTime(int64(e.For)))
		p.pause(w.now + int64(e.For))
	case faults.Topology:
		if e.Point == faults.WhileHeld && !w.someoneHolds() {
			w.note("!! topology of the key to become %v at the next grant", e.Nodes)
			w.pendingMoves = append(w.pendingMoves, i)
			return
		}
		w.startTopology(i)
	default:
		panic(fmt.Sprintf("sim: unknown fault kind %q passed validation", e.Kind))
	}
}

// someoneHolds reports whether a client believes it holds the lock.
func (w *world) someoneHolds() bool {
	for _, p := range w.clients {
		if p.holding && !p.beliefEnded {
			return true
		}
	}
	return false
}

// movePending applies the topology changes that waited for a grant.
func (w *world) movePending() {
	for _, i := range w.pendingMoves {
		w.startTopology(i)
	}
	w.pendingMoves = w.pendingMoves[:0]
}

func (w *world) endFault(i int) {
	e := &w.plan.Events[i]
	switch e.Kind {
	case faults.Crash:
		n := &w.nodes[e.Node]
		n.crashes--
		if e.BlackHole {
			n.blackHoles--
		}
		if n.crashes > 0 {
			w.note("!! crash of %s from event %d ends; still down (another crash is open)", n.name, i)
			return
		}
		n.up = true
		n.restarted, n.restartAt = true, w.now
		w.hist.Restarts = append(w.hist.Restarts, model.Restart{Node: e.Node, Time: w.now, Empty: n.wiped})
		n.wiped = false
		w.note("!! restart %s", n.name)
	case faults.Topology:
		w.endTopology(i)
	case faults.Partition:
		for j := range w.parts {
			if w.parts[j].id == i {
				w.parts = append(w.parts[:j], w.parts[j+1:]...)
				break
			}
		}
		w.note("!! heal partition of event %d", i)
	}
}

func fmtSigned(ns int64) string {
	if ns < 0 {
		return "-" + fmtTime(-ns)
	}
	return "+" + fmtTime(ns)
}

// validatePlan checks the plan against the world it will run in. Validate
// also rejects a drift that would stop or reverse a clock (clock.trueAt
// relies on that), naming the clock by its index.
func validatePlan(p faults.Plan, cfg Config) error {
	return p.Validate(shapeOf(cfg))
}

func shapeOf(cfg Config) faults.Shape {
	return ShapeOf(cfg)
}

// ShapeOf is the world a plan for cfg must fit.
func ShapeOf(cfg Config) faults.Shape {
	return faults.Shape{Nodes: cfg.Nodes, Replication: cfg.Replication, Hosts: cfg.Hosts,
		Clients: cfg.Hosts * cfg.ThreadsPerHost, Duration: cfg.Duration, TTL: cfg.TTL, Ring: cfg.Placement == PlacementRing}
}
