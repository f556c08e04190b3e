package faults

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// leaseBounds are the bounds of a lease-based lock's envelope (corrected,
// redlock): drift within 1%, no jumps, pauses that leave the validity's
// edge, no topology change; wipes kept but quarantined.
var leaseBounds = Bounds{ClockRateDiffMaxPPM: 10_000, NoClockJumps: true, ValidityEdge: 56 * time.Millisecond,
	NoTopology: true, LossMaxPPM: 20_000, Quarantined: true}

// boundsCases are bounds to draw within, alone and together.
var boundsCases = []Bounds{
	{ClockErrorMax: 100 * time.Millisecond},
	{ClockErrorMax: 100 * time.Millisecond, ClockJumpMax: 30 * time.Millisecond},
	{ClockRateDiffMaxPPM: 10_000},
	{ClockJumpMax: 2 * time.Second},
	{NoWipes: true, NoTopology: true, LossMaxPPM: 5_000},
	leaseBounds,
	{Fenced: true},
}

// crossed lists the bounds plan p crosses, judged from the plan alone.
func crossed(p Plan, bd Bounds, s Shape) []Breakable {
	var out []Breakable
	add := func(on bool, b Breakable) {
		if on && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	if bd.ClockErrorMax > 0 {
		add(clockSpreadMax(p, s) > int64(bd.ClockErrorMax), BreakClockError)
	}
	if bd.ClockRateDiffMaxPPM > 0 {
		fast, slow := int64(0), int64(0)
		for _, c := range p.Clocks {
			fast, slow = max(fast, c.DriftPPM), min(slow, c.DriftPPM)
		}
		add(fast-slow > bd.ClockRateDiffMaxPPM, BreakClockRate)
	}
	for _, e := range p.Events {
		size := max(e.Delta, -e.Delta)
		add(e.Kind == ClockJump && (bd.NoClockJumps || (bd.ClockJumpMax > 0 && size > bd.ClockJumpMax)), BreakClockJumps)
		add(e.Kind == Topology && bd.NoTopology, BreakFixedTopology)
		add(e.Kind == Crash && e.Wipe && bd.NoWipes, BreakDurableNodes)
	}
	if bd.ValidityEdge > 0 && p.Points.PausePPM > 0 {
		add(p.Points.UntilValidityLeft < bd.ValidityEdge+p.Network.ExtraLatencyMax || p.Points.PauseFor > 0, BreakUseWithinValidity)
		// A timed pause can hold a client waking from a point pause past
		// its validity.
		add(slices.ContainsFunc(p.Events, func(e Event) bool { return e.Kind == Pause }), BreakUseWithinValidity)
	}
	add(p.Deployment.NoQuarantine, BreakRestartQuarantine)
	add(p.Deployment.NoFencing, BreakTokenChecks)
	add(bd.LossMaxPPM > 0 && (p.Network.LossPPM > bd.LossMaxPPM || ReplyLost(p.Network) > bd.LossMaxPPM), BreakMessageLoss)
	add(bd.LossMaxPPM > 0 && slices.ContainsFunc(p.Events, func(e Event) bool { return e.Kind == Partition && e.OneWay }), BreakMessageLoss)
	return out
}

// clockSpreadMax is the most any two clocks (true time one of them) read
// apart at the start, at any jump and at the end of the run.
func clockSpreadMax(p Plan, s Shape) int64 {
	dev := func(c Clock, t int64) int64 {
		d := int64(c.Offset) + DriftAt(c.DriftPPM, t)
		for _, e := range p.Events {
			if e.Kind == ClockJump && e.Target == c.Kind && e.Index == c.Index && int64(e.At) <= t {
				d += int64(e.Delta)
			}
		}
		return d
	}
	clocks := slices.Clone(p.Clocks)
	for _, e := range p.Events {
		if e.Kind == ClockJump && !slices.ContainsFunc(clocks, func(c Clock) bool { return c.Kind == e.Target && c.Index == e.Index }) {
			clocks = append(clocks, Clock{Kind: e.Target, Index: e.Index})
		}
	}
	times := []int64{0, int64(s.Duration)}
	for _, e := range p.Events {
		times = append(times, int64(e.At)-1, int64(e.At))
	}
	worst := int64(0)
	for _, t := range times {
		hi, lo := int64(0), int64(0)
		for _, c := range clocks {
			d := dev(c, t)
			hi, lo = max(hi, d), min(lo, d)
		}
		worst = max(worst, hi-lo)
	}
	return worst
}

// Swarm plans drawn within bounds cross none of them, and still reach
// their edges: drifts a whole band apart, offsets and loss at the bound,
// pauses that leave just the edge.
func TestSwarmWithinKeepsItsBounds(t *testing.T) {
	for i, bd := range boundsCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			edges := map[string]bool{}
			for seed := range uint64(swarmSeeds) {
				p := SwarmWithin(seed, []Class{ClassAll}, defaultShape, bd)
				checkPlan(t, p, ClassAll, defaultShape, fmt.Sprintf("seed %d", seed))
				if c := crossed(p, bd, defaultShape); len(c) > 0 {
					t.Fatalf("seed %d crosses %v: %+v", seed, c, p)
				}
				noteEdges(edges, p, bd)
			}
			for _, want := range wantedEdges(bd) {
				if !edges[want] {
					t.Errorf("%d seeds never reached the edge %s", swarmSeeds, want)
				}
			}
		})
	}
}

// noteEdges records which edges of bd plan p reaches.
func noteEdges(edges map[string]bool, p Plan, bd Bounds) {
	fast, slow := int64(0), int64(0)
	for _, c := range p.Clocks {
		fast, slow = max(fast, c.DriftPPM), min(slow, c.DriftPPM)
		if bd.ClockErrorMax > 0 && (c.Offset == bd.ClockErrorMax/2 || c.Offset == -bd.ClockErrorMax/2) {
			edges["offset"] = true
		}
	}
	if bd.ClockRateDiffMaxPPM > 0 && fast-slow == bd.ClockRateDiffMaxPPM {
		edges["drift"] = true
	}
	if bd.LossMaxPPM > 0 && p.Network.LossPPM == bd.LossMaxPPM {
		edges["loss"] = true
	}
	if bd.ValidityEdge > 0 && p.Points.UntilValidityLeft == bd.ValidityEdge+p.Network.ExtraLatencyMax+time.Millisecond {
		edges["validity"] = true
	}
	for _, e := range p.Events {
		if e.Kind == ClockJump && bd.ClockJumpMax > 0 && (e.Delta == bd.ClockJumpMax || e.Delta == -bd.ClockJumpMax) {
			edges["jump"] = true
		}
	}
}

func wantedEdges(bd Bounds) []string {
	var out []string
	add := func(on bool, e string) {
		if on {
			out = append(out, e)
		}
	}
	add(bd.ClockErrorMax > 0, "offset")
	add(bd.ClockRateDiffMaxPPM > 0, "drift")
	add(bd.LossMaxPPM > 0, "loss")
	add(bd.ValidityEdge > 0, "validity")
	add(bd.ClockJumpMax > 0 && bd.ClockErrorMax == 0, "jump")
	return out
}

// breakAll is bd breaking every bound it has.
func breakAll(bd Bounds) Bounds {
	for _, x := range breakables {
		if bd.bounded(x.b) {
			bd.Break = append(bd.Break, x.b)
		}
	}
	return bd
}

// A draw that breaks bounds crosses at least one of them in every plan,
// each of them in some, and nothing it was not asked to.
func TestSwarmWithinBreaksWhatItIsAsked(t *testing.T) {
	for i, bd := range boundsCases {
		bd := breakAll(bd)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			seen := map[Breakable]bool{}
			for seed := range uint64(swarmSeeds) {
				p := SwarmWithin(seed, []Class{ClassAll}, defaultShape, bd)
				checkPlan(t, p, ClassAll, defaultShape, fmt.Sprintf("seed %d", seed))
				c := crossed(p, bd, defaultShape)
				if len(c) == 0 {
					t.Fatalf("seed %d breaks nothing of %v: %+v", seed, bd.Break, p)
				}
				for _, b := range c {
					if !slices.Contains(bd.Break, b) {
						t.Fatalf("seed %d crosses %s, not asked to", seed, b)
					}
					seen[b] = true
				}
			}
			for _, b := range bd.Break {
				if !seen[b] {
					t.Errorf("%d seeds never broke %s", swarmSeeds, b)
				}
			}
		})
	}
}

// The rapid generator keeps and breaks bounds as Swarm does.
func TestPlanGenWithinKeepsAndBreaksBounds(t *testing.T) {
	for i, bd := range boundsCases {
		t.Run(fmt.Sprintf("keep/%d", i), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				p := PlanGenWithin([]Class{ClassAll}, defaultShape, bd).Draw(rt, "plan")
				checkPlan(rt, p, ClassAll, defaultShape, "drawn plan")
				if c := crossed(p, bd, defaultShape); len(c) > 0 {
					rt.Fatalf("crosses %v: %+v", c, p)
				}
			})
		})
		t.Run(fmt.Sprintf("break/%d", i), func(t *testing.T) {
			bd := breakAll(bd)
			rapid.Check(t, func(rt *rapid.T) {
				p := PlanGenWithin([]Class{ClassAll}, defaultShape, bd).Draw(rt, "plan")
				checkPlan(rt, p, ClassAll, defaultShape, "drawn plan")
				c := crossed(p, bd, defaultShape)
				if len(c) == 0 {
					rt.Fatalf("breaks nothing of %v: %+v", bd.Break, p)
				}
			})
		})
	}
}

// Without bounds the draw is the plain swarm's, seed for seed.
func TestSwarmWithinNothingIsSwarm(t *testing.T) {
	for seed := range uint64(300) {
		a, b := Swarm(seed, []Class{ClassAll}, defaultShape), SwarmWithin(seed, []Class{ClassAll}, defaultShape, Bounds{})
		if !slices.Equal(mustEncode(t, a), mustEncode(t, b)) {
			t.Fatalf("seed %d: the unbounded draw differs from Swarm", seed)
		}
	}
}

func mustEncode(t *testing.T, p Plan) []byte {
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBoundsValidate(t *testing.T) {
	all := Allow(ClassAll)
	for name, tc := range map[string]struct {
		bd Bounds
		a  Allowed
	}{
		"negative clock error":      {Bounds{ClockErrorMax: -1}, all},
		"negative drift":            {Bounds{ClockRateDiffMaxPPM: -1}, all},
		"loss above one":            {Bounds{LossMaxPPM: Million + 1}, all},
		"unknown break":             {Bounds{Break: []Breakable{"gravity"}}, all},
		"break what is unbounded":   {Bounds{Break: []Breakable{BreakClockRate}}, all},
		"break without its class":   {Bounds{ClockRateDiffMaxPPM: 5, Break: []Breakable{BreakClockRate}}, Allow(ClassPause)},
		"break quarantine unneeded": {Bounds{Break: []Breakable{BreakRestartQuarantine}}, all},
	} {
		if err := tc.bd.Validate(tc.a); err == nil {
			t.Errorf("%s: %+v accepted", name, tc.bd)
		}
	}
	if err := breakAll(leaseBounds).Validate(all); err != nil {
		t.Errorf("the lease bounds, all broken: %v", err)
	}
}

func TestBoundsExclude(t *testing.T) {
	if got := leaseBounds.Excludes(ClassJump); !slices.Equal(got, []Breakable{BreakClockJumps}) {
		t.Errorf("no jumps: class jump excluded by %v", got)
	}
	if got := leaseBounds.Excludes(ClassTopology); !slices.Equal(got, []Breakable{BreakFixedTopology}) {
		t.Errorf("fixed topology: class topology excluded by %v", got)
	}
	for _, c := range []Class{ClassNone, ClassAmnesia, ClassPause, ClassAll} {
		if got := leaseBounds.Excludes(c); got != nil {
			t.Errorf("class %s excluded by %v", c, got)
		}
	}
	if got := (Bounds{NoWipes: true}).Excludes(ClassAmnesia); !slices.Equal(got, []Breakable{BreakDurableNodes}) {
		t.Errorf("durable nodes: class amnesia excluded by %v", got)
	}
}
