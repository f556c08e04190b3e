package sim

import (
	"cmp"
	"slices"

	"github.com/locksim/locksim/model"
)

// moveWalk gives the key's nodes at each instant of computeReach's walk,
// which asks in increasing order of time: those of the last move (in the
// history's order) made at or before it, and whether a move was still
// spreading to the clients then.
type moveWalk struct {
	moves    []model.Move
	order    []int // indexes of moves by time, ties in the history's order
	next     int   // the first of order not yet made
	last     int   // the highest index of a move made, -1 none
	until    int64 // the latest Until of a move made
	initial  []int
	anyMoved bool
}

func newMoveWalk(moves []model.Move, initial []int) *moveWalk {
	order := make([]int, len(moves))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(moves[a].Time, moves[b].Time) })
	return &moveWalk{moves: moves, order: order, last: -1, initial: initial}
}

// at is the key's nodes at t, and whether they were changing then; t must
// not be earlier than the last call's.
func (m *moveWalk) at(t int64) (replicas []int, changing bool) {
	for ; m.next < len(m.order) && m.moves[m.order[m.next]].Time <= t; m.next++ {
		i := m.order[m.next]
		if !m.anyMoved || m.moves[i].Until > m.until {
			m.until = m.moves[i].Until
		}
		m.last, m.anyMoved = max(m.last, i), true
	}
	if m.last < 0 {
		return m.initial, false
	}
	return m.moves[m.last].Nodes, t < m.until
}

// cutWalk says which host-node pairs the plan's partitions cut at each
// instant of computeReach's walk, which asks in increasing order of time:
// a partition (At, For) is in force in [At, At+For), and cuts a host from
// a node when exactly one of them is in its group (cut one way at least,
// and a call needs both ways).
type cutWalk struct {
	w            *world
	nodes        int
	starts, ends []int   // the partitions by start, and by end
	ns, ne       int     // the first of each not yet applied
	count        []int32 // per host*nodes+node: partitions in force that cut the pair
}

func (w *world) newCutWalk(parts []int) *cutWalk {
	c := &cutWalk{w: w, nodes: len(w.nodes), count: make([]int32, len(w.hosts)*len(w.nodes))}
	for _, i := range parts {
		if w.plan.Events[i].For > 0 { // else never in force
			c.starts = append(c.starts, i)
		}
	}
	c.ends = slices.Clone(c.starts)
	ev := w.plan.Events
	slices.SortStableFunc(c.starts, func(a, b int) int { return cmp.Compare(ev[a].At, ev[b].At) })
	slices.SortStableFunc(c.ends, func(a, b int) int { return cmp.Compare(ev[a].At+ev[a].For, ev[b].At+ev[b].For) })
	return c
}

// at brings the partitions in force up to t, not earlier than the last
// call's.
func (c *cutWalk) at(t int64) {
	ev := c.w.plan.Events
	for ; c.ns < len(c.starts) && int64(ev[c.starts[c.ns]].At) <= t; c.ns++ {
		c.apply(c.starts[c.ns], 1)
	}
	for ; c.ne < len(c.ends) && int64(ev[c.ends[c.ne]].At+ev[c.ends[c.ne]].For) <= t; c.ne++ {
		c.apply(c.ends[c.ne], -1)
	}
}

// apply adds d to the count of every pair partition i cuts.
func (c *cutWalk) apply(i int, d int32) {
	e := &c.w.plan.Events[i]
	var hosts, nodes uint64
	for _, h := range e.Hosts {
		hosts |= 1 << uint(h)
	}
	for _, n := range e.Nodes {
		nodes |= 1 << uint(n)
	}
	for h := range len(c.count) / max(c.nodes, 1) {
		inHost := hosts>>uint(h)&1 == 1
		for n := range c.nodes {
			if inHost != (nodes>>uint(n)&1 == 1) {
				c.count[h*c.nodes+n] += d
			}
		}
	}
}

// cut reports whether a partition in force cuts host from node.
func (c *cutWalk) cut(host, node int) bool { return c.count[host*c.nodes+node] > 0 }
