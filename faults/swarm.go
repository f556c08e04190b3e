package faults

import (
	"math/rand/v2"
	"slices"
	"time"
)

// swarmStream separates Swarm's PCG stream from every other component
// seeded with the same number.
const swarmStream = 0x5357_4152_4d21 // "SWARM!"

// maxSwarmEvents bounds the timed events drawn for one swarm plan; every
// enabled event kind gets at least one even past this bound, and a crash
// burst adds up to maxBurstExtra copies of its crash.
const maxSwarmEvents = 8

// Swarm draws a random plan from seed, as swarm testing does: each seed
// switches on a random non-empty subset of the faults the classes allow
// (so some runs see only crashes, others crashes and skew), then draws
// their parameters and up to eight timed events spread over the run, each
// enabled event kind at least once; one crash in four is a burst that takes
// one or two more nodes down with it. Only the classes' faults appear; with
// no class (or only ClassNone) the plan is fault-free. Same (seed,
// classes, shape) → same plan; the order of classes does not matter.
// It panics if s is not a valid Shape.
func Swarm(seed uint64, classes []Class, s Shape) Plan {
	return SwarmWithin(seed, classes, s, Bounds{})
}

// SwarmWithin is Swarm kept inside bd, reaching its edges, except for the
// bounds the seed breaks on purpose (a random non-empty subset of
// bd.Break that the classes allow). With the zero Bounds it is Swarm. It
// panics if s or bd is not valid (Shape.Validate, Bounds.Validate).
func SwarmWithin(seed uint64, classes []Class, s Shape, bd Bounds) Plan {
	s.mustValidate()
	a := Allow(classes...)
	bd.mustValidate(a)
	g := swarm{rng: rand.New(rand.NewPCG(seed, swarmStream)), s: s, bd: bd}
	g.br = g.pickBreaks()
	on := g.pickFeatures(a)
	var p Plan
	g.network(&p, on)
	g.clocks(&p, on)
	if on[featThreads] {
		p.ThreadsPerHost = g.intIn(2, MaxDrawnThreadsPerHost)
	}
	if on[featPoints] {
		p.Points = g.points(p.Network.ExtraLatencyMax)
	}
	if on[featZone] {
		p.Zones = g.zones()
	}
	p.Events = g.events(on, s.ClientsFor(p))
	if bd.ClockErrorMax > 0 && !g.br.has(BreakClockError) && !g.br.has(BreakClockJumps) {
		p.Events = g.fitJumps(p.Clocks, p.Events)
	}
	p.Deployment = Deployment{NoQuarantine: g.br.has(BreakRestartQuarantine), NoFencing: g.br.has(BreakTokenChecks)}
	p.normalize()
	return p
}

// swarm is one Swarm draw in progress.
type swarm struct {
	rng *rand.Rand
	s   Shape
	bd  Bounds
	br  breakSet // the bounds this draw crosses
}

// pickBreaks chooses which of the bounds named in Break this draw crosses:
// a uniformly random non-empty subset. With nothing to break it draws
// nothing, so an unbroken draw is the plain one.
func (g swarm) pickBreaks() breakSet {
	n := len(g.bd.Break)
	if n == 0 {
		return 0
	}
	mask := 1 + g.rng.Uint64N(1<<n-1)
	var br breakSet
	for i, b := range g.bd.Break {
		if mask&(1<<i) != 0 {
			br |= breakBit(b)
		}
	}
	return br
}

// pickFeatures switches on a uniformly random non-empty subset of the
// allowed features the bounds do not forbid, then every feature a broken
// bound needs.
func (g swarm) pickFeatures(a Allowed) (on [numFeatures]bool) {
	var allowed []feature
	for f := feature(0); f < numWorldFeatures; f++ {
		if a.permits(f) && !g.bd.forbids(f, g.br) {
			allowed = append(allowed, f)
		}
	}
	if len(allowed) > 0 {
		mask := 1 + g.rng.Uint64N(1<<len(allowed)-1) // never 0: some fault is always on
		for i, f := range allowed {
			on[f] = mask&(1<<i) != 0
		}
	}
	for _, x := range breakables {
		if f := forces(x.b); g.br.has(x.b) && f < numFeatures {
			on[f] = true
		}
	}
	if g.keepsValidity() && on[featPause] && on[featPoints] {
		// A timed pause that catches a client waking from a pause sized by
		// its validity holds it past the validity's end, between its check
		// and its use: inside the envelope only one of the two is drawn.
		// (Either alone cannot carry a use past the validity.)
		on[[]feature{featPause, featPoints}[g.rng.IntN(2)]] = false
	}
	return on
}

// keepsValidity reports whether the draw keeps fault-point pauses inside
// the holder's validity.
func (g swarm) keepsValidity() bool { return g.bd.keepsValidity(g.br) }

func (bd Bounds) keepsValidity(br breakSet) bool {
	return bd.ValidityEdge > 0 && !br.has(BreakUseWithinValidity) && !br.has(BreakTokenChecks)
}

func (g swarm) network(p *Plan, on [numFeatures]bool) {
	if on[featLoss] {
		p.Network.LossPPM = g.loss()
	}
	if on[featDuplicate] {
		p.Network.DuplicatePPM = g.ppmIn(1_000, 100_000) // 0.1–10%
	}
	if on[featLatency] {
		// Past the RPC timeout (200ms by default) a slow reply is a lost one.
		p.Network.ExtraLatencyMax = g.durIn(time.Millisecond, g.bd.extraLatencyMax(g.br))
	}
	if on[featReplyLoss] {
		if hi := g.replyLossMax(p.Network.LossPPM); hi < 300_000 {
			p.Network.ReplyLossPPM = PPM(g.edgeOr64(int64(min(10_000, hi)), int64(hi)))
		} else {
			p.Network.ReplyLossPPM = g.ppmIn(10_000, 300_000) // 1–30%
		}
	}
}

// clocks gives a random non-empty set of processes an offset and/or drift.
// A bounded drift comes from one band per plan (driftBand); a broken bound
// is crossed by the first clock drawn.
func (g swarm) clocks(p *Plan, on [numFeatures]bool) {
	if !on[featOffset] && !on[featDrift] {
		return
	}
	var band [2]int64
	if on[featDrift] && g.bd.ClockRateDiffMaxPPM > 0 && !g.br.has(BreakClockRate) {
		band = g.driftBand()
	}
	for _, k := range []ProcessKind{NodeProcess, HostProcess} {
		for i := range g.s.processes(k) {
			if g.rng.IntN(2) == 0 {
				p.Clocks = append(p.Clocks, g.clock(k, i, on, band, len(p.Clocks) == 0))
			}
		}
	}
	if len(p.Clocks) == 0 {
		p.Clocks = []Clock{g.clock(HostProcess, g.rng.IntN(g.s.Hosts), on, band, true)}
	}
}

// clock draws one process's clock; first says it is the plan's first, the
// one that crosses a bound the draw breaks.
func (g swarm) clock(k ProcessKind, i int, on [numFeatures]bool, band [2]int64, first bool) Clock {
	c := Clock{Kind: k, Index: i}
	errMax := g.bd.ClockErrorMax
	bounded := errMax > 0 && !g.br.has(BreakClockError)
	if on[featOffset] {
		switch {
		case bounded:
			c.Offset = g.edgeOr(errMax/2, func() time.Duration { return g.durIn(0, errMax/2) })
			c.Offset = signedOf(g, c.Offset)
		case errMax > 0 && first:
			c.Offset = signedOf(g, g.durIn(errMax+time.Millisecond, max(errMax+time.Millisecond, 3*time.Minute)))
		default:
			c.Offset = signedOf(g, g.durIn(time.Millisecond, 3*time.Minute))
		}
	}
	if on[featDrift] {
		rateMax := g.bd.ClockRateDiffMaxPPM
		switch {
		case rateMax > 0 && !g.br.has(BreakClockRate):
			c.DriftPPM = g.edgeOr64(band[0], band[1])
		case rateMax > 0 && first:
			c.DriftPPM = signedOf(g, g.int64In(rateMax+1, max(rateMax+1, 200_000)))
		case g.rng.IntN(4) == 0:
			// Mostly realistic drift; one time in four a wild one, because in
			// ten simulated minutes only large drift moves a clock past a TTL.
			c.DriftPPM = signedOf(g, g.int64In(10_000, 200_000))
		default:
			c.DriftPPM = signedOf(g, g.int64In(1, 10_000))
		}
		if bounded {
			c.DriftPPM = driftWithin(c.Offset, c.DriftPPM, errMax/2, g.s.Duration)
		}
	}
	return c
}

// driftBand is the band [lo, lo+max] every drift of a plan comes from: it
// holds zero (true time is a clock too), anywhere within it.
func (g swarm) driftBand() [2]int64 {
	w := g.bd.ClockRateDiffMaxPPM
	lo := -g.int64In(0, w)
	return [2]int64{lo, lo + w}
}

// edgeOr is the edge e half the time, else draw(): where a bound's
// one-line mistakes show.
func (g swarm) edgeOr(e time.Duration, draw func() time.Duration) time.Duration {
	if g.rng.IntN(2) == 0 {
		return e
	}
	return draw()
}

// edgeOr64 draws in [lo, hi], half the time at one of its ends.
func (g swarm) edgeOr64(lo, hi int64) int64 {
	switch g.rng.IntN(4) {
	case 0:
		return lo
	case 1:
		return hi
	}
	return g.int64In(lo, hi)
}

// replyLossMax is the most reply loss a plan with this loss may add while
// the two together lose at most LossMaxPPM of replies (ReplyLost); 300,000
// (the swarm's most) when nothing bounds it or the draw breaks the bound.
func (g swarm) replyLossMax(loss PPM) PPM { return replyLossMax(g.bd, g.br, loss) }

func replyLossMax(bd Bounds, br breakSet, loss PPM) PPM {
	switch {
	case bd.LossMaxPPM == 0 || br.has(BreakMessageLoss):
		return 300_000
	case loss >= bd.LossMaxPPM:
		return 0
	}
	// (1-loss)(1-reply) >= 1-max, in ppm, rounding so as to stay inside.
	keep := (uint64(Million-bd.LossMaxPPM)*uint64(Million) + uint64(Million-loss) - 1) / uint64(Million-loss)
	return min(Million-PPM(keep), 300_000)
}

// ReplyLost is the probability, in ppm, that a reply is lost under n: by
// loss, or dropped after its request was applied (a request is lost with
// n.LossPPM alone).
func ReplyLost(n Network) PPM {
	kept := uint64(Million-n.LossPPM) * uint64(Million-n.ReplyLossPPM) / uint64(Million)
	return Million - PPM(kept)
}

// loss draws a steady loss: 0.1–20%, or up to the bound (at it half the
// time), or above the bound when the draw breaks it.
func (g swarm) loss() PPM {
	bound := g.bd.LossMaxPPM
	switch {
	case bound == 0:
		return g.ppmIn(1_000, 200_000) // 0.1–20%
	case g.br.has(BreakMessageLoss):
		return g.ppmIn(bound+1, max(bound+1, 200_000))
	case g.rng.IntN(2) == 0:
		return bound
	}
	return g.ppmIn(min(1_000, bound), bound)
}

// points draws the fault points: pauses of 1 s to 2 min; with a validity
// edge to keep, pauses sized by the validity that leave the edge, the
// plan's extra latency and a little more (often very little); when the
// draw breaks it, pauses that end past the validity.
func (g swarm) points(extraLatency time.Duration) Points {
	pts := Points{PausePPM: g.ppmIn(10_000, 200_000)}
	edge := g.bd.ValidityEdge
	switch {
	case g.br.has(BreakUseWithinValidity) || g.br.has(BreakTokenChecks):
		pts.UntilValidityLeft = -g.durIn(time.Millisecond, 30*time.Second)
		pts.PauseFor = g.durIn(time.Second, 2*time.Minute) // where there is no validity
	case edge > 0:
		slack := g.edgeOr(0, func() time.Duration { return g.durIn(0, 30*time.Second) })
		pts.UntilValidityLeft = edge + extraLatency + time.Millisecond + slack
	default:
		pts.PauseFor = g.durIn(time.Second, 2*time.Minute)
	}
	return pts
}

// events draws the timed events: one per enabled event kind, then more of
// random enabled kinds up to a random total, sorted by time.
func (g swarm) events(on [numFeatures]bool, clients int) []Event {
	var kinds []feature
	for _, f := range []feature{featCrash, featAmnesia, featPartition, featClog, featJump, featPause, featTopology} {
		if on[f] {
			kinds = append(kinds, f)
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	var out []Event
	for _, f := range kinds {
		out = append(out, g.event(f, clients))
	}
	topologies := 0 // at most three topology changes per run
	if on[featTopology] {
		topologies = 1
	}
	for extra := g.intIn(0, maxSwarmEvents-min(len(out), maxSwarmEvents)); extra > 0; extra-- {
		f := kinds[g.rng.IntN(len(kinds))]
		if f == featTopology {
			if topologies == 3 {
				continue // a draw lost, not retried: the loop stays bounded
			}
			topologies++
		}
		out = append(out, g.event(f, clients))
	}
	out = g.bursts(out)
	slices.SortStableFunc(out, func(a, b Event) int { return cmpDuration(a.At, b.At) })
	return out
}

// maxBurstExtra is how many more nodes a crash burst takes down with the
// drawn one.
const maxBurstExtra = 2

// bursts turns one crash in four into a burst: one to maxBurstExtra other
// nodes crash at the same instant, for as long, wiped or not alike (a rack
// losing power, a bad deploy, a region's restart). Independent draws almost
// never line up the several-nodes-at-once failures that quorums exist to
// survive, so swarm testing adds them as a shape of its own, as Jepsen's
// nemeses kill a random majority.
func (g swarm) bursts(events []Event) []Event {
	if g.s.Nodes < 2 {
		return events
	}
	for _, e := range events {
		if e.Kind != Crash || g.rng.IntN(4) != 0 {
			continue
		}
		others := g.rng.Perm(g.s.Nodes - 1) // indexes among the nodes other than e.Node
		for _, o := range others[:g.intIn(1, min(maxBurstExtra, g.s.Nodes-1))] {
			if o >= e.Node {
				o++
			}
			b := e
			b.Node = o
			events = append(events, b)
		}
	}
	return events
}
