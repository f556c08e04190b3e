package sim

import (
	"slices"
	"strconv"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/model"
)

// Placements: how the DHT places a key on its nodes (Config.Placement).
const (
	// PlacementFirst puts every key on the same nodes: the first
	// Replication of them, and a topology change names them anew. It is
	// how locksim placed keys before 0.4 ("" reads as it), so that older
	// repro files replay as they were recorded.
	PlacementFirst = "first"
	// PlacementRing places each key by consistent hashing: on the first
	// Replication members of the ring clockwise from the key's hash, in
	// ring order, so Topology(key) depends on the key; a topology change
	// names the ring's members.
	PlacementRing = "ring"
)

// Topologies: the world keeps every membership the run has had (views,
// by generation; views[0] the initial one) and each client the generation
// it has learnt of, which lags behind the true one while a change spreads
// (faults.Event.Spread). With PlacementFirst a membership is the key's
// replica set itself; with PlacementRing, the ring's members, from which
// each key's replica set is computed.

// ring is the ring's geometry: each node's position, fixed by its name,
// and the salt of the keys' positions (Config.RingSalt).
type ring struct {
	pos  []uint64
	salt string
}

func newRing(nodes, salt int) ring {
	r := ring{pos: make([]uint64, nodes)}
	if salt != 0 {
		r.salt = strconv.Itoa(salt) + "/"
	}
	for i := range r.pos {
		r.pos[i] = ringHash("n" + strconv.Itoa(i))
	}
	return r
}

// ringHash is a name's position on the ring: FNV-1a, scrambled.
func ringHash(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return splitmix64(h)
}

// replicas is the replica set of key among members: the first n members
// clockwise from the key's position, in ring order (all of them when
// there are fewer).
func (r ring) replicas(members []int, key string, n int) []int {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b int) int {
		switch {
		case r.pos[a] < r.pos[b]:
			return -1
		case r.pos[a] > r.pos[b]:
			return 1
		}
		return a - b
	})
	h := ringHash(r.salt + key)
	start := 0
	for start < len(sorted) && r.pos[sorted[start]] < h {
		start++
	}
	out := make([]int, 0, min(n, len(sorted)))
	for i := 0; i < len(sorted) && len(out) < n; i++ {
		out = append(out, sorted[(start+i)%len(sorted)])
	}
	return out
}

// placement is key's replica set under membership members.
func (w *world) placement(members []int, key string) []int {
	if !w.isRing {
		return members
	}
	return w.ring.replicas(members, key, w.cfg.Replication)
}

// keyNodes is the lock key's nodes under the true membership now, placed
// once per topology generation (an Injector's Step asks at every holder's
// fault point).
func (w *world) keyNodes() []int {
	if w.keyNodesGen != w.gen+1 {
		w.keyNodesOf, w.keyNodesGen = w.placement(w.views[w.gen], LockKey), w.gen+1
	}
	return w.keyNodesOf
}

// initialMembers is the membership a run starts with.
func (w *world) initialMembers() []int {
	n := w.cfg.Replication
	if w.isRing {
		n = w.cfg.Nodes
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// changeTopology makes members the topology from now (for plan event i,
// whose Spread says how long the clients take to learn of it).
func (w *world) changeTopology(i int, members []int) {
	e := &w.plan.Events[i]
	prev := w.views[w.gen]
	w.views = append(w.views, slices.Clone(members))
	w.gen = len(w.views) - 1
	w.note("!! topology of the key becomes %v", members)
	var last int64 // the last client's lag
	for c, p := range w.clients {
		lag := int64(0)
		if e.Spread > 0 {
			lag = w.between(Choice{Kind: ChoiceSpread, Client: c, Node: -1}, 0, int64(e.Spread))
		}
		if lag == 0 {
			p.viewGen = w.gen
			continue
		}
		last = max(last, lag)
		w.q.push(w.now+lag, evView, int32(c), uint64(w.gen))
	}
	if w.isRing {
		before, after := w.placement(prev, LockKey), w.placement(members, LockKey)
		if slices.Equal(before, after) {
			return // the key's nodes stay as they were
		}
		members = after
	}
	w.hist.Moves = append(w.hist.Moves, model.Move{Time: w.now, Nodes: slices.Clone(members), Until: w.now + last})
}

// startTopology applies plan event i, a topology change, now; one that
// lasts For restores the membership it replaced when it ends.
func (w *world) startTopology(i int) {
	e := &w.plan.Events[i]
	if e.For > 0 {
		w.restores = append(w.restores, topologyRestore{event: i, members: w.views[w.gen]})
		w.q.push(w.now+int64(e.For), evFaultEnd, int32(i), 0)
	}
	w.changeTopology(i, e.Nodes)
}

// endTopology restores the membership plan event i replaced.
func (w *world) endTopology(i int) {
	for j, r := range w.restores {
		if r.event == i {
			w.restores = slices.Delete(w.restores, j, j+1)
			w.note("!! topology change of event %d ends", i)
			w.changeTopology(i, r.members)
			return
		}
	}
}

type topologyRestore struct {
	event   int
	members []int
}

// learnView is client c learning of generation gen (a change that spread).
func (p *process) learnView(gen uint64) {
	if int(gen) > p.viewGen {
		p.viewGen = int(gen)
	}
}

// topoEntry is one view a client has built: the servers of a key at one
// generation. Views are never mutated, so an algorithm may keep one
// across calls.
type topoEntry struct {
	gen  int
	key  string
	view []algorithm.Server
}

// topologyView is Env.Topology: key's replica set as this client knows
// it, built once per generation and key (two keys at most are in use: the
// lock's and, in the original's scavenge, its item's).
func (p *process) topologyView(key string) []algorithm.Server {
	w := p.w
	if !w.isRing {
		key = "" // every key has the same nodes
	}
	for i := range p.topo {
		if e := &p.topo[i]; e.view != nil && e.gen == p.viewGen && e.key == key {
			return e.view
		}
	}
	nodes := w.placement(w.views[p.viewGen], key)
	view := make([]algorithm.Server, len(nodes))
	for i, ni := range nodes {
		view[i] = p.servers[ni]
	}
	p.topo[p.topoNext] = topoEntry{gen: p.viewGen, key: key, view: view}
	p.topoNext = (p.topoNext + 1) % len(p.topo)
	return view
}
