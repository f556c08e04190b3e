package faults

import (
	"cmp"
	"slices"
	"time"
)

// event draws one event of feature f at a random time of the run.
func (g swarm) event(f feature, clients int) Event {
	e := Event{At: g.durIn(0, g.s.Duration-1)}
	switch f {
	case featCrash:
		e.Kind, e.Node = Crash, g.rng.IntN(g.s.Nodes)
		if g.rng.IntN(8) != 0 { // one crash in eight is for good
			e.For = g.durIn(time.Second, 3*time.Minute)
		}
		e.BlackHole = g.rng.IntN(2) == 0 // half of them time clients out
	case featAmnesia:
		e.Kind, e.Node, e.Wipe = Crash, g.rng.IntN(g.s.Nodes), true
		e.For = g.durIn(time.Second, 3*time.Minute)
		e.BlackHole = g.rng.IntN(2) == 0
	case featPartition:
		e.Kind, e.For = Partition, g.durIn(time.Second, 3*time.Minute)
		e.Nodes, e.Hosts = g.group()
		// One way loses the replies to requests it lets through: message
		// loss, so none inside a loss bound (the draw is made either way).
		e.OneWay = g.rng.IntN(4) == 0 && (g.bd.LossMaxPPM == 0 || g.br.has(BreakMessageLoss))
	case featClog:
		e.Kind, e.Node = Clog, g.rng.IntN(g.s.Nodes)
		e.For = g.durIn(100*time.Millisecond, 30*time.Second)
	case featJump:
		e.Kind = ClockJump
		e.Target, e.Index = g.process()
		e.Delta = signedOf(g, g.jumpSize())
	case featPause:
		// Some pauses outlast the one-minute TTL: the seed's classic bug.
		// Half of them wait for the client's next call inside an acquire,
		// half of those close to the TTL: an acquire that takes about as
		// long as its items live is where validity arithmetic slips.
		e.Kind, e.Client = Pause, g.rng.IntN(clients)
		e.For = g.durIn(time.Second, 3*time.Minute)
		switch g.rng.IntN(4) {
		case 0, 1:
		case 2:
			e.Point = InAcquire
			if ttl := g.s.ttl(); g.rng.IntN(2) == 0 {
				e.For = g.durIn(ttl-ttl/20, ttl+ttl/2)
			}
		default: // between reading an expired item and removing it
			e.Point = BeforeDelete
		}
	case featTopology:
		// Half of them wait until a lock is held: where moving the key's
		// items away is felt. A third reach the clients' caches over a
		// while; a quarter are a rebalance that ends, a third of those an
		// empty ring while it rebalances or bootstraps.
		e.Kind = Topology
		e.Nodes = g.members()
		if g.rng.IntN(2) == 0 {
			e.Point = WhileHeld
		}
		if g.rng.IntN(3) == 0 {
			e.Spread = g.durIn(10*time.Millisecond, 30*time.Second)
		}
		if g.rng.IntN(4) == 0 {
			e.For = g.durIn(time.Second, time.Minute)
			keep := g.bd.ReplicationMin > 0 && !g.br.has(BreakReplicationMin)
			if g.rng.IntN(3) == 0 && !keep {
				e.Nodes = nil
			}
		}
	}
	return e
}

// members draws a topology change's nodes: on a ring, its new members
// (each node with probability 3/4, at least one, or the bounds' minimum
// replication); else the key's new replica set, in DHT order.
func (g swarm) members() []int {
	if !g.s.Ring {
		return g.rng.Perm(g.s.Nodes)[:g.s.Replication]
	}
	var out []int
	for i := range g.s.Nodes {
		if g.rng.IntN(4) != 0 {
			out = append(out, i)
		}
	}
	least := 1
	if g.bd.ReplicationMin > 0 && !g.br.has(BreakReplicationMin) {
		least = min(g.bd.ReplicationMin, g.s.Nodes)
	}
	for _, n := range g.rng.Perm(g.s.Nodes) {
		if len(out) >= least {
			break
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// jumpSize draws a clock jump's size: 1 s to 5 min; up to a bound (at it
// half the time); past the bound when the draw breaks it.
func (g swarm) jumpSize() time.Duration {
	bound := g.bd.ClockJumpMax
	switch {
	case bound == 0 || g.bd.NoClockJumps:
		return g.durIn(time.Second, 5*time.Minute)
	case g.br.has(BreakClockJumps):
		lo := max(bound+time.Millisecond, time.Second)
		return g.durIn(lo, max(lo, 5*time.Minute))
	}
	return g.edgeOr(bound, func() time.Duration { return g.durIn(time.Millisecond, bound) })
}

// fitJumps narrows every clock jump of a sorted event list so that its
// clock stays within half the clock-error bound of true time, before and
// after it, to the end of the run; half the time the jump goes as far as
// the bound lets it. A jump with no room left is dropped.
func (g swarm) fitJumps(clocks []Clock, events []Event) []Event {
	half := int64(g.bd.ClockErrorMax / 2)
	end := int64(g.s.Duration)
	out := events[:0]
	for _, e := range events {
		if e.Kind != ClockJump {
			out = append(out, e)
			continue
		}
		lo, hi := jumpRoom(clocks, out, e, half, end, g.bd.ClockJumpMax)
		d := int64(e.Delta)
		if g.rng.IntN(2) == 0 { // to the edge, in the drawn direction
			if d > 0 {
				d = hi
			} else {
				d = lo
			}
		}
		d = min(max(d, lo), hi) / 1e6 * 1e6 // whole ms, toward zero: still inside
		if d == 0 {
			continue
		}
		e.Delta = time.Duration(d)
		out = append(out, e)
	}
	return out
}

// group draws one side of a partition: each node and host joins with
// probability one half, and the side is never empty.
func (g swarm) group() (nodes, hosts []int) {
	for i := range g.s.Nodes {
		if g.rng.IntN(2) == 0 {
			nodes = append(nodes, i)
		}
	}
	for i := range g.s.Hosts {
		if g.rng.IntN(2) == 0 {
			hosts = append(hosts, i)
		}
	}
	if len(nodes) == 0 && len(hosts) == 0 {
		nodes = []int{g.rng.IntN(g.s.Nodes)}
	}
	return nodes, hosts
}

// process draws a node or a host, each kind half the time.
func (g swarm) process() (ProcessKind, int) {
	if g.rng.IntN(2) == 0 {
		return NodeProcess, g.rng.IntN(g.s.Nodes)
	}
	return HostProcess, g.rng.IntN(g.s.Hosts)
}

func (g swarm) intIn(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g swarm) int64In(lo, hi int64) int64 { return lo + g.rng.Int64N(hi-lo+1) }

// durIn draws in whole milliseconds above lo, so plans read well in repro
// files; lo itself need not be whole.
func (g swarm) durIn(lo, hi time.Duration) time.Duration {
	return lo + time.Millisecond*time.Duration(g.rng.Int64N(int64((hi-lo)/time.Millisecond)+1))
}

func (g swarm) ppmIn(lo, hi PPM) PPM { return PPM(g.int64In(int64(lo), int64(hi))) }

// signedOf flips v's sign half the time.
func signedOf[T ~int64](g swarm, v T) T {
	if g.rng.IntN(2) == 0 {
		return -v
	}
	return v
}

func cmpDuration(a, b time.Duration) int { return cmp.Compare(a, b) }

// zones puts the hosts in local time zones: half the time all of them in
// one zone that changes to or from daylight-saving time once, at the same
// instant for all (a data centre's local time); else each host in a zone
// of its own, whole hours from UTC, half of them with a change at their
// own instant (hosts around the world).
func (g swarm) zones() []Zone {
	out := make([]Zone, g.s.Hosts)
	shift := func() (time.Duration, time.Duration) {
		at := g.durIn(0, g.s.Duration-1)
		return at, time.Duration(1-2*g.rng.IntN(2)) * time.Hour // spring forward or fall back
	}
	if g.rng.IntN(2) == 0 {
		offset := time.Duration(g.rng.IntN(25)-12) * time.Hour
		at, by := shift()
		for h := range out {
			out[h] = Zone{Host: h, Offset: offset, ShiftAt: at, Shift: by}
		}
		return out
	}
	for h := range out {
		out[h] = Zone{Host: h, Offset: time.Duration(g.rng.IntN(25)-12) * time.Hour}
		if g.rng.IntN(2) == 0 {
			out[h].ShiftAt, out[h].Shift = shift()
		}
	}
	return out
}
