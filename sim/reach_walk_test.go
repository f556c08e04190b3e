package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// computeReach walks a run's instants once (reach_walk.go); it must give
// what asking every window, move and partition at every instant gives
// (referenceReach, the way it was computed before, quadratic in the
// plan). Swarm plans of every class, and random plans whose faults
// overlap, on worlds of several shapes.
func TestReachEqualsTheReference(t *testing.T) {
	n := 0
	for seed := uint64(1); seed <= uint64(determinismSeeds()); seed++ {
		s := swarmScenario(seed)
		if seed%3 == 0 {
			s.Plan = overlappingPlan(seed, shapeOf(s.Config), 60)
		}
		if seed%4 == 0 {
			s.Config.Hosts, s.Config.ThreadsPerHost, s.Plan.ThreadsPerHost = 4, 2, 0
			s.Plan = overlappingPlan(seed, shapeOf(s.Config), 40)
		}
		w, err := newWorld(s)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		w.loop()
		w.finish()
		got := w.hist.Reach
		w.hist.Reach = nil
		w.referenceReach()
		if !slices.Equal(got, w.hist.Reach) {
			t.Fatalf("seed %d: reach\n%v\nwant\n%v", seed, got, w.hist.Reach)
		}
		n += len(got)
	}
	if n == 0 {
		t.Fatal("no seed had a stretch of reach")
	}
}

// overlappingPlan is n random crashes, clogs, partitions, pauses and
// topology changes of s, long and short, overlapping.
func overlappingPlan(seed uint64, s faults.Shape, n int) faults.Plan {
	r := rand.New(rand.NewPCG(seed, 7))
	var p faults.Plan
	for range n {
		e := faults.Event{At: time.Duration(r.Int64N(int64(s.Duration))),
			For: []time.Duration{time.Millisecond, time.Second, 30 * time.Second, 3 * time.Minute}[r.IntN(4)]}
		switch r.IntN(5) {
		case 0:
			e.Kind, e.Node = faults.Crash, r.IntN(s.Nodes)
		case 1:
			e.Kind, e.Node = faults.Clog, r.IntN(s.Nodes)
		case 2:
			e.Kind, e.Nodes, e.Hosts, e.OneWay = faults.Partition, []int{r.IntN(s.Nodes)}, []int{r.IntN(s.Hosts)}, r.IntN(2) == 0
		case 3:
			e.Kind, e.Client = faults.Pause, r.IntN(s.Clients)
		default:
			e.Kind, e.Nodes = faults.Topology, r.Perm(s.Nodes)[:s.Replication]
		}
		p.Events = append(p.Events, e)
	}
	slices.SortStableFunc(p.Events, func(a, b faults.Event) int { return int(a.At - b.At) })
	return p
}

// referenceReach is computeReach as it was: at every instant, every
// obstacle window, every move and every partition asked again.
func (w *world) referenceReach() {
	end := w.hist.End
	if w.neverInTime() || end <= 0 {
		return
	}
	u := w.referenceObstacles()
	replicas := w.placement(w.views[0], LockKey)
	open := make([]int, len(w.clients))
	for k, t := range u.points {
		if t >= end {
			break
		}
		next := end
		if k+1 < len(u.points) {
			next = u.points[k+1]
		}
		changing := false
		for _, mv := range w.hist.Moves {
			if mv.Time <= t {
				replicas = mv.Nodes
				changing = changing || t < mv.Until
			}
		}
		for c := range w.clients {
			ok := !changing && w.referenceMajority(u, c, replicas, t)
			switch {
			case ok && open[c] > 0:
				w.hist.Reach[open[c]-1].To = next
			case ok:
				w.hist.Reach = append(w.hist.Reach, model.Reach{Client: c, From: t, To: next})
				open[c] = len(w.hist.Reach)
			default:
				open[c] = 0
			}
		}
	}
	slices.SortStableFunc(w.hist.Reach, func(a, b model.Reach) int { return a.Client - b.Client })
}

// rawObstacles are obstacles' windows as collected, not merged.
type rawObstacles struct {
	down, clog [64][]window
	parts      []int
	paused     [][]window
	points     []int64
}

// referenceObstacles is obstacles as it was: the windows as collected.
func (w *world) referenceObstacles() *rawObstacles {
	end := w.hist.End
	u := &rawObstacles{paused: make([][]window, len(w.clients)), points: []int64{0}}
	span := func(at, d int64) window {
		if d <= 0 {
			return window{at, end}
		}
		return window{at, min(at+d, end)}
	}
	add := func(ws *[]window, x window) {
		if ws != nil {
			*ws = append(*ws, x)
		}
		u.points = append(u.points, x.from, x.to)
	}
	for i, e := range w.plan.Events {
		at, d := int64(e.At), int64(e.For)
		switch e.Kind {
		case faults.Crash:
			add(&u.down[e.Node], span(at, d))
		case faults.Clog:
			add(&u.clog[e.Node], span(at, d))
		case faults.Partition:
			u.parts = append(u.parts, i)
			add(nil, span(at, d))
		case faults.Pause:
			if e.Point == "" && e.Client < len(u.paused) {
				add(&u.paused[e.Client], span(at, d))
			}
		}
	}
	for _, p := range w.hist.Pauses {
		if p.Client < len(u.paused) {
			add(&u.paused[p.Client], span(p.Time, p.For))
		}
	}
	if w.quarantine {
		for _, r := range w.hist.Restarts {
			add(&u.down[r.Node], span(r.Time, int64(w.cfg.TTL)))
		}
	}
	for _, mv := range w.hist.Moves {
		add(nil, window{mv.Time, max(mv.Time, mv.Until)})
	}
	u.points = append(u.points, end)
	slices.Sort(u.points)
	u.points = slices.Compact(u.points)
	return u
}

func (w *world) referenceMajority(u *rawObstacles, c int, replicas []int, t int64) bool {
	in := func(ws []window) bool {
		return slices.ContainsFunc(ws, func(x window) bool { return x.from <= t && t < x.to })
	}
	if in(u.paused[c]) || len(replicas) == 0 {
		return false
	}
	up := 0
	for _, n := range replicas {
		if !in(u.down[n]) && !in(u.clog[n]) && !w.referenceCut(u.parts, w.clients[c].host, n, t) {
			up++
		}
	}
	return up > len(replicas)/2
}

func (w *world) referenceCut(parts []int, host, node int, t int64) bool {
	for _, i := range parts {
		e := &w.plan.Events[i]
		if t < int64(e.At) || t >= int64(e.At+e.For) {
			continue
		}
		if slices.Contains(e.Hosts, host) != slices.Contains(e.Nodes, node) {
			return true
		}
	}
	return false
}
