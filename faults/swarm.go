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
	s.mustValidate()
	g := swarm{rng: rand.New(rand.NewPCG(seed, swarmStream)), s: s}
	on := g.pickFeatures(Allow(classes...))
	var p Plan
	g.network(&p, on)
	g.clocks(&p, on)
	if on[featThreads] {
		p.ThreadsPerHost = g.intIn(2, 3)
	}
	if on[featPoints] {
		p.Points = Points{PausePPM: g.ppmIn(10_000, 200_000), PauseFor: g.durIn(time.Second, 2*time.Minute)}
	}
	p.Events = g.events(on, s.ClientsFor(p))
	return p
}

// swarm is one Swarm draw in progress.
type swarm struct {
	rng *rand.Rand
	s   Shape
}

// pickFeatures switches on a uniformly random non-empty subset of the
// allowed features.
func (g swarm) pickFeatures(a Allowed) (on [numFeatures]bool) {
	var allowed []feature
	for f := feature(0); f < numWorldFeatures; f++ {
		if a.permits(f) {
			allowed = append(allowed, f)
		}
	}
	if len(allowed) == 0 {
		return on
	}
	mask := 1 + g.rng.Uint64N(1<<len(allowed)-1) // never 0: some fault is always on
	for i, f := range allowed {
		on[f] = mask&(1<<i) != 0
	}
	return on
}

func (g swarm) network(p *Plan, on [numFeatures]bool) {
	if on[featLoss] {
		p.Network.LossPPM = g.ppmIn(1_000, 200_000) // 0.1–20%
	}
	if on[featDuplicate] {
		p.Network.DuplicatePPM = g.ppmIn(1_000, 100_000) // 0.1–10%
	}
	if on[featLatency] {
		// Past the RPC timeout (200ms by default) a slow reply is a lost one.
		p.Network.ExtraLatencyMax = g.durIn(time.Millisecond, time.Second)
	}
	if on[featReplyLoss] {
		p.Network.ReplyLossPPM = g.ppmIn(10_000, 300_000) // 1–30%
	}
}

// clocks gives a random non-empty set of processes an offset and/or drift.
func (g swarm) clocks(p *Plan, on [numFeatures]bool) {
	if !on[featOffset] && !on[featDrift] {
		return
	}
	for _, k := range []ProcessKind{NodeProcess, HostProcess} {
		for i := range g.s.processes(k) {
			if g.rng.IntN(2) == 0 {
				p.Clocks = append(p.Clocks, g.clock(k, i, on))
			}
		}
	}
	if len(p.Clocks) == 0 {
		p.Clocks = []Clock{g.clock(HostProcess, g.rng.IntN(g.s.Hosts), on)}
	}
}

func (g swarm) clock(k ProcessKind, i int, on [numFeatures]bool) Clock {
	c := Clock{Kind: k, Index: i}
	if on[featOffset] {
		c.Offset = signedOf(g, g.durIn(time.Millisecond, 3*time.Minute))
	}
	if on[featDrift] {
		// Mostly realistic drift; one time in four a wild one, because in ten
		// simulated minutes only large drift moves a clock past a TTL.
		if g.rng.IntN(4) == 0 {
			c.DriftPPM = signedOf(g, g.int64In(10_000, 200_000))
		} else {
			c.DriftPPM = signedOf(g, g.int64In(1, 10_000))
		}
	}
	return c
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
