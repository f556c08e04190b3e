package faults

import (
	"slices"
	"time"

	"pgregory.net/rapid"
)

// eventGen draws one event of one of kinds; clients is how many client
// threads the plan runs with.
func eventGen(kinds []feature, s Shape, clients int, bd Bounds, br breakSet) *rapid.Generator[Event] {
	lastMs := int64((s.Duration - 1) / time.Millisecond) // events happen before the run ends
	return rapid.Custom(func(t *rapid.T) Event {
		e := Event{At: drawMillis(t, "at", 0, lastMs)}
		node := func() int { return rapid.IntRange(0, s.Nodes-1).Draw(t, "node") }
		switch rapid.SampledFrom(kinds).Draw(t, "kind") {
		case featClog:
			e.Kind, e.Node, e.For = Clog, node(), drawMillis(t, "for", 1, 30_000)
		case featPause:
			e.Kind, e.Client = Pause, rapid.IntRange(0, clients-1).Draw(t, "client")
			e.For = drawMillis(t, "for", 1, 180_000)
			e.Point = rapid.SampledFrom([]Point{"", InAcquire, BeforeDelete}).Draw(t, "point")
		case featJump:
			genJump(t, &e, s, bd, br)
		case featCrash:
			e.Kind, e.Node = Crash, node()
			if !rapid.Bool().Draw(t, "forever") {
				e.For = drawMillis(t, "for", 1, 180_000)
			}
			e.BlackHole = rapid.Bool().Draw(t, "black_hole")
		case featAmnesia:
			e.Kind, e.Node, e.Wipe = Crash, node(), true
			e.For = drawMillis(t, "for", 1, 180_000)
			e.BlackHole = rapid.Bool().Draw(t, "black_hole")
		case featPartition:
			e.Kind, e.For = Partition, drawMillis(t, "for", 1, 180_000)
			e.Nodes, e.Hosts = drawGroup(t, s)
			e.OneWay = rapid.Bool().Draw(t, "one_way") && (bd.LossMaxPPM == 0 || br.has(BreakMessageLoss))
		case featTopology:
			genTopology(t, &e, s, bd, br)
		}
		return e
	})
}

// drawGroup draws one side of a partition: sorted distinct nodes and
// hosts, never both empty.
func drawGroup(t *rapid.T, s Shape) (nodes, hosts []int) {
	set := func(label string, n int) []int {
		v := rapid.SliceOfNDistinct(rapid.IntRange(0, n-1), 0, n, rapid.ID[int]).Draw(t, label)
		slices.Sort(v)
		return v
	}
	nodes, hosts = set("nodes", s.Nodes), set("hosts", s.Hosts)
	if len(nodes) == 0 && len(hosts) == 0 {
		nodes = []int{rapid.IntRange(0, s.Nodes-1).Draw(t, "node")}
	}
	return nodes, hosts
}

// genJump draws a clock jump into e: its target, and a size inside the
// bound, beyond it when breaking clock-jumps, or any when jumps are allowed.
func genJump(t *rapid.T, e *Event, s Shape, bd Bounds, br breakSet) {
	e.Kind = ClockJump
	e.Target = rapid.SampledFrom([]ProcessKind{HostProcess, NodeProcess}).Draw(t, "target")
	e.Index = rapid.IntRange(0, s.processes(e.Target)-1).Draw(t, "index")
	switch j := int64(bd.ClockJumpMax / time.Millisecond); {
	case bd.NoClockJumps || j == 0:
		e.Delta = drawMillis(t, "delta", 1, 300_000)
	case br.has(BreakClockJumps):
		e.Delta = drawMillis(t, "delta", j+1, max(j+1, 300_000))
	default:
		e.Delta = drawMillis(t, "delta", 1, j)
	}
	if rapid.Bool().Draw(t, "backwards") {
		e.Delta = -e.Delta
	}
}

// genTopology draws a topology change into e: the key's new nodes (a
// ring's members, or a replica set), whether it waits for a holder, and
// whether caches learn of it late, it is undone, or it empties the key.
func genTopology(t *rapid.T, e *Event, s Shape, bd Bounds, br breakSet) {
	e.Kind = Topology
	all := make([]int, s.Nodes)
	for i := range all {
		all[i] = i
	}
	perm := rapid.Permutation(all).Draw(t, "nodes")
	keep := bd.ReplicationMin > 0 && !br.has(BreakReplicationMin)
	if s.Ring { // the ring's new members: a prefix of a permutation, sorted
		least := 1
		if keep {
			least = min(bd.ReplicationMin, s.Nodes)
		}
		e.Nodes = slices.Sorted(slices.Values(perm[:rapid.IntRange(least, s.Nodes).Draw(t, "members")]))
	} else {
		e.Nodes = perm[:s.Replication]
	}
	if rapid.Bool().Draw(t, "while_held") {
		e.Point = WhileHeld
	}
	// Drawn whether used or not: a fixed number of draws per event
	// keeps rapid's shrinker from reordering across structures.
	stale, spread := rapid.Bool().Draw(t, "stale caches"), drawMillis(t, "spread", 1, 30_000)
	temporary, lasts := rapid.Bool().Draw(t, "temporary"), drawMillis(t, "for", 1, 60_000)
	empty := rapid.Bool().Draw(t, "empty")
	if stale {
		e.Spread = spread
	}
	if temporary {
		e.For = lasts
		if empty && !keep {
			e.Nodes = nil
		}
	}
}
