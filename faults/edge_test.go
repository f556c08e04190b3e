package faults

import "testing"

// NodeDriftsAtEdge puts every node's clock at one edge of the drift bound
// in some seeds whose plan drifts, keeps every clock in one band of the
// bound's width that holds zero, and leaves the plan valid; the draw
// replays, and a plan drawn without a bound is left as it is.
func TestNodeDriftsAtEdge(t *testing.T) {
	bd := Bounds{ClockRateDiffMaxPPM: 10_000, NoClockJumps: true}
	s := defaultShape
	moved := 0
	for seed := uint64(1); seed <= 300; seed++ {
		p := SwarmWithin(seed, []Class{ClassAll}, s, bd)
		q := NodeDriftsAtEdge(seed, p, bd, s.Nodes)
		if err := q.Validate(s); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if again := NodeDriftsAtEdge(seed, p, bd, s.Nodes); len(again.Clocks) != len(q.Clocks) {
			t.Fatalf("seed %d: the draw does not replay", seed)
		}
		edge := int64(0)
		for _, c := range q.Clocks {
			if c.Kind == NodeProcess && c.DriftPPM != 0 {
				edge = c.DriftPPM
			}
		}
		atEdge := edge == 10_000 || edge == -10_000
		nodes := 0
		for _, c := range q.Clocks {
			if atEdge && c.Kind == NodeProcess && c.DriftPPM != edge {
				t.Fatalf("seed %d: node %d drifts %d, not at the edge %d", seed, c.Index, c.DriftPPM, edge)
			}
			if atEdge && c.DriftPPM*edge < 0 {
				t.Fatalf("seed %d: %s %d drifts %d, across zero from the edge %d: two clocks %d ppm apart", seed, c.Kind, c.Index, c.DriftPPM, edge, c.DriftPPM-edge)
			}
			if c.Kind == NodeProcess {
				nodes++
			}
		}
		if atEdge {
			if nodes != s.Nodes {
				t.Fatalf("seed %d: %d of %d nodes at the edge", seed, nodes, s.Nodes)
			}
			moved++
		}
	}
	if moved < 30 || moved > 200 {
		t.Fatalf("%d of 300 seeds put the nodes at the edge: want some, not all", moved)
	}
	if p := Swarm(7, []Class{ClassAll}, s); len(NodeDriftsAtEdge(7, p, Bounds{}, s.Nodes).Clocks) != len(p.Clocks) {
		t.Fatal("a plan without a drift bound was changed")
	}
}

// DrawUse draws each misuse in some seeds and none in others, always a
// valid plan section that class pause allows and class loss does not; a
// rate without its duration is refused.
func TestDrawUse(t *testing.T) {
	late, short, refresh, none := 0, 0, 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		p := Plan{Use: DrawUse(seed, 8e9)}
		if err := p.Validate(defaultShape); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := Allow(ClassPause).Check(p); err != nil {
			t.Fatalf("seed %d: class pause does not allow its misuse: %v", seed, err)
		}
		switch {
		case p.Use == Use{}:
			none++
			continue
		case p.Use.LatePPM > 0:
			late++
		}
		if p.Use.ShortDeadlinePPM > 0 {
			short++
		}
		if p.Use.RefreshPPM > 0 {
			refresh++
		}
		if Allow(ClassLoss).Check(p) == nil {
			t.Fatalf("seed %d: class loss allows misuse", seed)
		}
	}
	if late == 0 || short == 0 || refresh == 0 || none == 0 {
		t.Fatalf("late %d, short %d, refresh %d, none %d of 200: each should be drawn", late, short, refresh, none)
	}
	if err := (Plan{Use: Use{LatePPM: 5}}).Validate(defaultShape); err == nil {
		t.Fatal("a late rate without late_by was accepted")
	}
}
