package envelope

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

const sec = int64(time.Second)

// breachOfOne runs breach detection for one assumption of a.
func breachOfOne(t *testing.T, n algorithm.Assumption, a algorithm.Assumptions, plan faults.Plan, h model.History) (Breach, bool) {
	t.Helper()
	bs := Breaches(algorithm.Envelope{Safety: a}, sim.DefaultConfig(), plan, h)
	for _, b := range bs {
		if b.Assumption == n {
			return b, true
		}
	}
	return Breach{}, false
}

func TestClockErrorBreach(t *testing.T) {
	a := algorithm.Assumptions{ClockErrorMax: 100 * time.Millisecond}
	h := model.History{End: 600 * sec}
	clock := func(off time.Duration, drift int64) faults.Clock {
		return faults.Clock{Kind: faults.HostProcess, Index: 1, Offset: off, DriftPPM: drift}
	}
	for name, tc := range map[string]struct {
		plan faults.Plan
		at   int64 // -1: no breach
	}{
		"within":             {faults.Plan{Clocks: []faults.Clock{clock(50*time.Millisecond, 0)}}, -1},
		"offset beyond":      {faults.Plan{Clocks: []faults.Clock{clock(150*time.Millisecond, 0)}}, 0},
		"two within apart":   {faults.Plan{Clocks: []faults.Clock{clock(60*time.Millisecond, 0), {Kind: faults.NodeProcess, Offset: -60 * time.Millisecond}}}, 0},
		"drift crosses":      {faults.Plan{Clocks: []faults.Clock{clock(0, 1000)}}, 100*sec + 1000}, // 1000 ppm: 100 ms after 100 s, 1 ns more 1 µs later
		"drift after end":    {faults.Plan{Clocks: []faults.Clock{clock(0, 100)}}, -1},
		"jump crosses":       {faults.Plan{Events: []faults.Event{{At: 42 * time.Second, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 2, Delta: time.Second}}}, 42 * sec},
		"jump after the end": {faults.Plan{Events: []faults.Event{{At: 700 * time.Second, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 2, Delta: time.Second}}}, -1},
	} {
		b, ok := breachOfOne(t, algorithm.ClockError, a, tc.plan, h)
		switch {
		case tc.at < 0 && ok:
			t.Errorf("%s: breach %v, want none", name, b)
		case tc.at >= 0 && !ok:
			t.Errorf("%s: no breach, want one at %d", name, tc.at)
		case ok && b.Time != tc.at:
			t.Errorf("%s: breach at %d, want %d: %v", name, b.Time, tc.at, b)
		}
	}
}

func TestClockRateAndJumpBreaches(t *testing.T) {
	h := model.History{End: 600 * sec}
	rate := algorithm.Assumptions{ClockRateDiffMaxPPM: 10_000}
	within := faults.Plan{Clocks: []faults.Clock{{Kind: faults.HostProcess, DriftPPM: 6000}, {Kind: faults.NodeProcess, DriftPPM: -4000}}}
	if b, ok := breachOfOne(t, algorithm.ClockRate, rate, within, h); ok {
		t.Errorf("drifts 10000 ppm apart: breach %v", b)
	}
	beyond := faults.Plan{Clocks: []faults.Clock{{Kind: faults.HostProcess, DriftPPM: 6000}, {Kind: faults.NodeProcess, DriftPPM: -4001}}}
	if b, ok := breachOfOne(t, algorithm.ClockRate, rate, beyond, h); !ok || !strings.Contains(b.Detail, "10001 ppm") {
		t.Errorf("drifts 10001 ppm apart: %v, %v", b, ok)
	}
	// True time is a clock too: one drifting clock alone can break the bound.
	if _, ok := breachOfOne(t, algorithm.ClockRate, rate, faults.Plan{Clocks: []faults.Clock{{Kind: faults.NodeProcess, DriftPPM: 10_001}}}, h); !ok {
		t.Error("a clock 10001 ppm fast of true time: no breach")
	}
	jump := faults.Plan{Events: []faults.Event{{At: 5 * time.Second, Kind: faults.ClockJump, Target: faults.HostProcess, Delta: -3 * time.Second}}}
	if b, ok := breachOfOne(t, algorithm.ClockJumps, algorithm.Assumptions{NoClockJumps: true}, jump, h); !ok || b.Time != 5*sec {
		t.Errorf("no jumps tolerated, a jump at 5 s: %v, %v", b, ok)
	}
	if _, ok := breachOfOne(t, algorithm.ClockJumps, algorithm.Assumptions{ClockJumpMax: 3 * time.Second}, jump, h); ok {
		t.Error("a 3 s jump where 3 s are tolerated is a breach")
	}
}

// hist builds a history from events, numbering them.
func hist(end int64, events ...model.Event) model.History {
	h := model.History{End: end, TTL: 60 * time.Second, Clients: []model.Client{{Name: "h0/t0", Host: "h0"}, {Name: "h1/t0", Host: "h1"}}}
	for i, e := range events {
		e.Seq = uint64(i + 1)
		h.Events = append(h.Events, e)
	}
	return h
}

func TestLateUseBreach(t *testing.T) {
	a := algorithm.Assumptions{UseWithinValidity: true}
	grant := model.Event{Time: 1 * sec, Client: 0, Kind: model.AcquireReturn, Granted: true, ValidUntilTrue: 60 * sec}
	expired := model.Event{Time: 60 * sec, Client: 0, Kind: model.BeliefEnd, Reason: "expired"}
	late := model.Event{Time: 61 * sec, Client: 0, Kind: model.ResourceWrite, Value: 1, Accepted: true, Sent: 59 * sec}
	inTime := model.Event{Time: 59 * sec, Client: 0, Kind: model.ResourceWrite, Value: 1, Accepted: true, Sent: 58 * sec}
	if b, ok := breachOfOne(t, algorithm.UseWithinValidity, a, faults.Plan{}, hist(100*sec, grant, inTime, expired)); ok {
		t.Errorf("a write in time: breach %v", b)
	}
	b, ok := breachOfOne(t, algorithm.UseWithinValidity, a, faults.Plan{}, hist(100*sec, grant, expired, late))
	if !ok || b.Time != 61*sec || !strings.HasPrefix(b.By, "the network") {
		t.Errorf("a write sent in time, delivered late: %v, %v; want a breach at 61 s by the network", b, ok)
	}
	// Sent late after a fault-point pause over the validity's end.
	h := hist(100*sec, grant, expired, model.Event{Time: 70 * sec, Client: 0, Kind: model.ResourceWrite, Value: 1, Accepted: true, Sent: 70 * sec})
	h.Pauses = []model.PointPause{{Client: 0, Time: 10 * sec, For: 60 * sec, Point: string(faults.BetweenReadWrite)}}
	if b, ok := breachOfOne(t, algorithm.UseWithinValidity, a, faults.Plan{}, h); !ok || !strings.Contains(b.By, "between-read-write") {
		t.Errorf("a write after a point pause past the validity: %v, %v", b, ok)
	}
	// Released before: nothing after the release is the hold's.
	release := model.Event{Time: 62 * sec, Client: 0, Kind: model.ReleaseCall}
	other := model.Event{Time: 63 * sec, Client: 0, Kind: model.ResourceRead, Accepted: true, Sent: 63 * sec}
	if b, ok := breachOfOne(t, algorithm.UseWithinValidity, a, faults.Plan{}, hist(100*sec, grant, expired, release, other)); ok {
		t.Errorf("an access after the release: breach %v", b)
	}
}

func TestTopologyQuarantineAndLossBreaches(t *testing.T) {
	call := model.Event{Time: 10 * sec, Client: 0, Kind: model.AcquireCall}
	grant := model.Event{Time: 11 * sec, Client: 0, Kind: model.AcquireReturn, Granted: true}
	end := model.Event{Time: 20 * sec, Client: 0, Kind: model.BeliefEnd, Reason: "release"}
	moved := func(at time.Duration) model.History {
		h := hist(100*sec, call, grant, end)
		h.Moves = []model.Move{{Time: int64(at), Nodes: []int{2, 3, 4}}}
		return h
	}
	fixed := algorithm.Assumptions{FixedTopologyWhileHeld: true}
	if b, ok := breachOfOne(t, algorithm.FixedTopology, fixed, faults.Plan{}, moved(15*time.Second)); !ok || b.Time != 15*sec {
		t.Errorf("a move while held: %v, %v", b, ok)
	}
	if b, ok := breachOfOne(t, algorithm.FixedTopology, fixed, faults.Plan{}, moved(10500*time.Millisecond)); !ok {
		t.Errorf("a move during the acquire that was granted: %v, %v", b, ok)
	}
	if b, ok := breachOfOne(t, algorithm.FixedTopology, fixed, faults.Plan{}, moved(30*time.Second)); ok {
		t.Errorf("a move while free: breach %v", b)
	}

	quarantine := algorithm.Assumptions{RestartQuarantine: true}
	lapse := faults.Plan{Deployment: faults.Deployment{NoQuarantine: true}}
	restarted := model.History{End: 100 * sec, Restarts: []model.Restart{{Node: 1, Time: 30 * sec}, {Node: 2, Time: 40 * sec, Empty: true}}}
	if b, ok := breachOfOne(t, algorithm.RestartQuarantine, quarantine, lapse, restarted); !ok || b.Time != 40*sec {
		t.Errorf("no quarantine, n2 back empty at 40 s: %v, %v", b, ok)
	}
	if b, ok := breachOfOne(t, algorithm.RestartQuarantine, quarantine, faults.Plan{}, restarted); ok {
		t.Errorf("quarantined: breach %v", b)
	}

	loss := algorithm.Assumptions{MessageLossMaxPPM: 200_000}
	for _, tc := range []struct {
		n      faults.Network
		breach bool
	}{
		{faults.Network{LossPPM: 200_000}, false},
		{faults.Network{LossPPM: 200_001}, true},
		{faults.Network{LossPPM: 100_000, ReplyLossPPM: 110_000}, false}, // 1-0.9*0.89 = 19.9%
		{faults.Network{LossPPM: 100_000, ReplyLossPPM: 120_000}, true},  // 20.8% of replies lost
	} {
		if _, ok := breachOfOne(t, algorithm.MessageLoss, loss, faults.Plan{Network: tc.n}, model.History{End: sec}); ok != tc.breach {
			t.Errorf("%+v: breach %v, want %v", tc.n, ok, tc.breach)
		}
	}
}

// Replies lost to the client count against the message-loss bound: a slow
// link that outlasts the RPC timeout too often breaks it from the start, a
// one-way partition from its start; a slower link within the bound, or a
// two-way partition, does not.
func TestLateRepliesAreLoss(t *testing.T) {
	a := algorithm.Assumptions{MessageLossMaxPPM: 100_000}
	env := algorithm.Envelope{Safety: a}
	h := model.History{End: 600 * sec}
	slow := func(extra time.Duration) sim.Config {
		c := sim.DefaultConfig()
		c.SlowExtra, c.SlowHost, c.SlowNode = extra, 0, -1
		return c
	}
	part := func(oneWay bool) faults.Plan {
		return faults.Plan{Events: []faults.Event{{At: 30 * time.Second, Kind: faults.Partition, Nodes: []int{0}, For: time.Minute, OneWay: oneWay}}}
	}
	for name, tc := range map[string]struct {
		cfg  sim.Config
		plan faults.Plan
		at   int64 // -1: no breach
	}{
		"no slow link":            {sim.DefaultConfig(), faults.Plan{}, -1},
		"slow, within the bound":  {slow(100 * time.Millisecond), faults.Plan{}, -1},
		"slower than the timeout": {slow(400 * time.Millisecond), faults.Plan{}, 0},
		"two-way partition":       {sim.DefaultConfig(), part(false), -1},
		"one-way partition":       {sim.DefaultConfig(), part(true), 30 * sec},
	} {
		var got *Breach
		for _, b := range Breaches(env, tc.cfg, tc.plan, h) {
			if b.Assumption == algorithm.MessageLoss {
				got = &b
			}
		}
		switch {
		case tc.at < 0 && got != nil:
			t.Errorf("%s: breach %s, want none", name, got)
		case tc.at >= 0 && (got == nil || got.Time != tc.at):
			t.Errorf("%s: breach %v, want one at %d", name, got, tc.at)
		}
	}
	// lateShare, and the bound a world inside the envelope keeps.
	if s := lateShare(slow(400 * time.Millisecond)); s <= 100_000 {
		t.Errorf("lateShare of a 400 ms slow link = %d ppm, want above 10%%", s)
	}
	c := slow(400 * time.Millisecond)
	c.SlowExtra = slowestWithin(c, 100_000)
	if lateShare(c) > 100_000 || c.SlowExtra == 0 {
		t.Errorf("slowestWithin gives %s, late share %d ppm: want the slowest link within 10%%", c.SlowExtra, lateShare(c))
	}
}

// A slow link's delay and the plan's extra latency add up on the same
// round trip: judged apart, a slow host with 40% of its round trips late
// counted as under a 10% loss bound.
func TestSlowLinkAndExtraLatencyAddUp(t *testing.T) {
	c := sim.DefaultConfig()
	c.SlowExtra, c.SlowHost, c.SlowNode = 122*time.Millisecond, 0, -1
	extra := 60 * time.Millisecond
	if apart := lateShare(c) + lateShareOf(c.RPCTimeout-2*c.LatencyMax, extra); apart > 100_000 {
		t.Fatalf("the case no longer shows the mistake: apart %d ppm", apart)
	}
	if got := slowLinkLate(c, extra); got < 300_000 || got > 500_000 {
		t.Errorf("slow link plus extra latency: %d ppm late, want about 40%%", got)
	}
	plan := faults.Plan{Network: faults.Network{ExtraLatencyMax: extra}}
	if _, broken := lossBreach(100_000, c, plan, int64(time.Minute)); !broken {
		t.Error("a world with 40% of a host's round trips late is judged inside a 10% loss bound")
	}
}
