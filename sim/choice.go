package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// Every nondeterministic decision the simulator makes is a choice point,
// and every choice point asks one Chooser. The default Chooser is the
// seed's random streams (randomChoices): what every sweep and every
// recorded repro runs on, draw for draw. Other Choosers enumerate the
// decisions instead (explore.Exhaust), or bias them.
//
// A Chooser sees each choice point once, in the order the run meets them,
// which is a pure function of the scenario and of the Chooser's earlier
// answers: the run is deterministic for any deterministic Chooser.

// ChoiceKind is what a choice point decides.
type ChoiceKind uint8

const (
	// ChoiceLatency is a message's one-way delay: Between(LatencyMin, LatencyMax).
	ChoiceLatency ChoiceKind = iota + 1
	// ChoiceTail is whether a message is in the latency tail: Chance(1%).
	ChoiceTail
	// ChoiceTailDelay is a tail message's extra delay: Between(0, LatencyTail).
	ChoiceTailDelay
	// ChoiceExtraLatency is the plan's extra delay: Between(0, ExtraLatencyMax).
	ChoiceExtraLatency
	// ChoiceSlow is the slow link's extra delay: Between(0, SlowExtra).
	ChoiceSlow
	// ChoiceLoss is whether a message is lost: Chance(LossPPM).
	ChoiceLoss
	// ChoiceReplyLoss is whether a reply is lost after its request was
	// applied: Chance(ReplyLossPPM).
	ChoiceReplyLoss
	// ChoiceDuplicate is whether a message is delivered twice: Chance(DuplicatePPM).
	ChoiceDuplicate
	// ChoicePointPause is whether a client pauses at a fault point
	// (Choice.Point): Chance(PausePPM).
	ChoicePointPause
	// ChoiceStrike is whether a timed pause that waits for a server call
	// inside Acquire strikes at this one.
	ChoiceStrike
	// ChoiceSpread is when a client learns of a topology change: Between(0, Spread).
	ChoiceSpread
	// ChoiceStart is when a client starts: Between(0, ThinkMax).
	ChoiceStart
	// ChoiceThink is a client's think time between attempts: Between(ThinkMin, ThinkMax).
	ChoiceThink
	// ChoiceHold is a holder's time between its read and its write: Between(HoldMin, HoldMax).
	ChoiceHold
)

var choiceNames = [...]string{"?", "latency", "tail", "tail-delay", "extra-latency", "slow", "loss",
	"reply-loss", "duplicate", "point-pause", "strike", "spread", "start", "think", "hold"}

func (k ChoiceKind) String() string {
	if int(k) < len(choiceNames) {
		return choiceNames[k]
	}
	return "?"
}

// Choice is one choice point: what it decides, and whose decision it is.
type Choice struct {
	Kind ChoiceKind
	// Client is the client thread the decision is about (its index), or
	// -1: the one that sends or receives the message, pauses, learns,
	// thinks or holds.
	Client int
	// Node is the node a message goes to or comes from, or -1 (a resource
	// access, or no message).
	Node int
	// Reply says the message is a reply.
	Reply bool
	// Point is the fault point of a ChoicePointPause.
	Point faults.Point
	// At is the true time of the decision; Chooser-only: the seed's
	// streams never read it, and points without a Chooser do not set it.
	At int64
}

// A Chooser decides every choice point of a run.
type Chooser interface {
	// Between returns an integer in [lo, hi] (lo when hi <= lo).
	Between(c Choice, lo, hi int64) int64
	// Chance returns whether an event of probability ppm parts per million
	// happens. It is asked also when ppm is 0: a Chooser may make the event
	// happen anyway (a fault the plan did not draw).
	Chance(c Choice, ppm uint32) bool
}

// randomChoices is the default Chooser: the seed's streams, one per
// component, so that drawing more from one (adding a fault) never
// reshuffles another (the workload). It draws exactly what the kernel drew
// before choice points had a name.
type randomChoices struct{ w *world }

func (r randomChoices) Between(c Choice, lo, hi int64) int64 { return between(r.w.streamOf(c), lo, hi) }
func (r randomChoices) Chance(c Choice, ppm uint32) bool     { return chance(r.w.streamOf(c), ppm) }

// streamOf is the random stream a choice point draws from.
func (w *world) streamOf(c Choice) *stream {
	switch c.Kind {
	case ChoiceStart, ChoiceThink, ChoiceHold:
		return &w.clients[c.Client].workRand
	case ChoicePointPause, ChoiceStrike:
		return &w.pointRnd
	case ChoiceSpread:
		return &w.topoRand
	}
	return &w.netRand
}

// between and chance ask the run's Chooser. Without one (w.choose nil)
// they draw from the seed's streams directly, as randomChoices does,
// without building the Choice: the common case stays a few instructions.
func (w *world) between(c Choice, lo, hi int64) int64 {
	if w.choose == nil {
		return between(w.streamOf(c), lo, hi)
	}
	c.At = w.now
	return w.choose.Between(c, lo, hi)
}

func (w *world) chance(c Choice, ppm uint32) bool {
	if w.choose == nil {
		return chance(w.streamOf(c), ppm)
	}
	c.At = w.now
	return w.choose.Chance(c, ppm)
}

// netBetween and netChance are between and chance for message m's choice
// points, which draw from the network stream.
func (w *world) netBetween(k ChoiceKind, m *message, lo, hi int64) int64 {
	if w.choose == nil {
		return between(&w.netRand, lo, hi)
	}
	return w.choose.Between(w.msgChoice(k, m), lo, hi)
}

// netChance is small enough to inline: with no chance and no chooser it
// is false without a call (a fault-free plan asks it three times a
// message); drawChance does the rest.
func (w *world) netChance(k ChoiceKind, m *message, ppm uint32) bool {
	if ppm == 0 && w.choose == nil {
		return false
	}
	return w.drawChance(k, m, ppm)
}

func (w *world) drawChance(k ChoiceKind, m *message, ppm uint32) bool {
	if w.choose != nil {
		return w.choose.Chance(w.msgChoice(k, m), ppm)
	}
	return chance(&w.netRand, ppm)
}

// msgChoice is the choice point of kind k about message m.
func (w *world) msgChoice(k ChoiceKind, m *message) Choice {
	c := Choice{Kind: k, Client: -1, Node: -1, Reply: m.isReply, At: w.now}
	for _, e := range [2]endpoint{m.from, m.to} {
		switch {
		case e == resourceEndpoint:
		case e.isClient():
			c.Client = e.client()
		default:
			c.Node = int(e)
		}
	}
	return c
}

// Step is a protocol step at which an Injector may start faults: a client
// about to send a request to a node, or at a fault point of its workload.
type Step struct {
	Client int
	// Node is the node the client is about to call, or -1 at a fault point.
	Node int
	// Point is the fault point, or "" before a call.
	Point faults.Point
	// Holding says the client believes it holds the lock; ValidityLeft is
	// then how much true time its grant's validity has left (0: the grant
	// has no validity, or none is left).
	Holding      bool
	ValidityLeft int64
	// Acquiring says the step is inside the client's Acquire.
	Acquiring bool
	// Members is the key's topology now, as the DHT has it (not as the
	// client may know it): the ring's members, or with PlacementFirst the
	// key's nodes. Read only.
	Members []int
	// KeyNodes, at a holder's fault points, is the key's nodes now, as the
	// DHT places it on Members. Read only.
	KeyNodes []int
	// At is the step's true time.
	At int64
}

// An Injector is a Chooser that also starts faults the plan does not hold,
// at protocol steps: a crash of the node a client is about to call, a
// pause of the client itself. Systematic exploration (explore.Exhaust)
// enumerates them; the seed's streams inject nothing.
type Injector interface {
	Chooser
	// Inject returns the faults to start at step s, now. Their At is
	// ignored. A Pause of s.Client pauses it here and now, as a fault
	// point's pause does (History.Pauses); a ClockJump of a host's clock
	// moves its holders' validity deadlines with it; the other kinds start
	// as the plan's events do, and the run reports them (Result.Injected).
	Inject(s Step) []faults.Event
}

// offer offers the run's Injector protocol step s of client p. The
// callers check that there is one: a sweep's runs build no Step.
func (p *process) offer(s Step) {
	w := p.w
	s.Client, s.Holding, s.Acquiring, s.At = p.idx, p.holding && !p.beliefEnded, p.openOp == model.AcquireCall, w.now
	s.Members = w.views[w.gen]
	if s.Node < 0 && s.Holding {
		s.KeyNodes = w.keyNodes()
	}
	if s.Holding && p.validUntil > w.now {
		s.ValidityLeft = p.validUntil - w.now
	}
	for _, e := range w.inject.Inject(s) {
		e.At = time.Duration(w.now)
		if e.Kind == faults.Crash && (e.Node < 0 || e.Node >= len(w.nodes)) {
			panic(fmt.Sprintf("sim: the injector crashes node %d of %d", e.Node, len(w.nodes)))
		}
		if e.Kind == faults.ClockJump && (e.Index < 0 || e.Target == faults.NodeProcess && e.Index >= len(w.nodes) || e.Target != faults.NodeProcess && e.Index >= len(w.hosts)) {
			panic(fmt.Sprintf("sim: the injector jumps the clock of %s %d, of %d nodes and %d hosts", e.Target, e.Index, len(w.nodes), len(w.hosts)))
		}
		if e.Kind == faults.Topology && slices.ContainsFunc(e.Nodes, func(n int) bool { return n < 0 || n >= len(w.nodes) }) {
			panic(fmt.Sprintf("sim: the injector moves the key to nodes %v, of %d", e.Nodes, len(w.nodes)))
		}
		if e.Kind == faults.Pause && e.Client == p.idx {
			point := s.Point
			if point == "" {
				point = faults.Point("before-call")
			}
			if w.tracing {
				w.note("%s: pause %s at %s (injected)", p.name, fmtTime(int64(e.For)), point)
			}
			w.hist.Pauses = append(w.hist.Pauses, model.PointPause{Client: p.idx, Time: w.now, For: int64(e.For), Point: string(point)})
			w.hist.Healed = min(max(w.hist.Healed, w.now+int64(e.For)), w.end)
			p.sleep(int64(e.For))
			continue
		}
		w.injected = append(w.injected, e)
		w.plan.Events = append(slices.Clip(w.plan.Events), e)
		switch {
		case e.Kind == faults.ClockJump && e.Target == faults.NodeProcess:
			w.nodes[e.Index].clock.addJump(w.now, int64(e.Delta))
		case e.Kind == faults.ClockJump:
			w.stepHost(e.Index, int64(e.Delta))
		}
		end := w.end // a crash without For never heals
		if e.For > 0 || e.Kind != faults.Crash {
			end = w.now + int64(e.For)
		}
		w.hist.Healed = min(max(w.hist.Healed, end), w.end)
		w.startFault(len(w.plan.Events) - 1)
	}
}
