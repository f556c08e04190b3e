package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// ttlLock is sensitive to every fault kind: node-side TTL items (node
// clocks), a validity deadline (host clocks), a majority of the topology.
type ttlLock struct{}

const ttlLockTTL = 2 * time.Second

func (ttlLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	start := env.Now()
	owner := env.ClientName()
	top := env.Topology(key)
	ok := 0
	for _, s := range top {
		if _, err := s.SetIfAbsentTTL(key, owner, ttlLockTTL); err == nil {
			ok++
		}
	}
	if ok > len(top)/2 {
		return algorithm.Grant{Granted: true, Owner: owner, ValidUntil: start + ttlLockTTL}
	}
	ttlLock{}.Release(env, key, algorithm.Grant{Owner: owner})
	return algorithm.Grant{}
}

func (ttlLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	for _, s := range env.Topology(key) {
		_ = s.CompareAndDelete(key, g.Owner)
	}
}

var ttlVariant = algorithm.Variant{Name: "ttl", New: func() algorithm.Lock { return ttlLock{} }}

func faultRun(t *testing.T, plan faults.Plan) Result {
	t.Helper()
	// Some loss in every run, so that lock items are left behind to expire
	// and clocks (node TTLs) matter.
	plan.Network.LossPPM += 20_000
	res, err := Run(Scenario{Config: smallConfig(), Variant: ttlVariant, Seed: 11, Plan: plan, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.History.Abort != nil {
		t.Fatalf("abort: %s", res.History.Abort.Detail)
	}
	return res
}

// effects are the trace lines that are not fault announcements ("!!").
func effects(r Result) []string {
	var out []string
	for _, e := range r.Trace {
		if !strings.HasPrefix(e.What, "!!") {
			out = append(out, fmtTime(e.Time)+" "+e.What)
		}
	}
	return out
}

// linesIn returns the trace lines containing substr with time in [from, to).
func linesIn(r Result, substr string, from, to time.Duration) []string {
	var out []string
	for _, e := range r.Trace {
		if e.Time >= int64(from) && e.Time < int64(to) && strings.Contains(e.What, substr) {
			out = append(out, fmtTime(e.Time)+" "+e.What)
		}
	}
	return out
}

// Every timed fault kind is applied: the run's hash changes, the fault is
// announced in the trace, and it has effects beyond its announcement. Each
// case also checks the fault's own signature in the trace.
func TestEachFaultKindChangesTheRun(t *testing.T) {
	at, span := 30*time.Second, 40*time.Second
	quiet := at + 100*time.Millisecond // messages in flight at the start have landed
	base := faultRun(t, faults.Plan{})
	for _, tc := range []struct {
		name     string
		event    faults.Event
		announce string
		check    func(t *testing.T, r Result)
	}{
		{"crash", faults.Event{At: at, Kind: faults.Crash, Node: 0, For: span}, "!! crash n0", func(t *testing.T, r Result) {
			if l := linesIn(r, "n0 applies", at, at+span); len(l) > 0 {
				t.Errorf("a crashed node applied requests: %v", l)
			}
			if len(linesIn(r, "n0 refuses", at, at+span)) == 0 || len(linesIn(r, "n0 applies", at+span, time.Hour)) == 0 {
				t.Error("a crashed node should refuse while down and apply again after its restart")
			}
		}},
		{"crash-wipe", faults.Event{At: at, Kind: faults.Crash, Node: 0, For: span, Wipe: true}, "!! crash n0 (wipe=true)", nil},
		{"partition", faults.Event{At: at, Kind: faults.Partition, Nodes: []int{0}, For: span}, "!! partition", func(t *testing.T, r Result) {
			if l := linesIn(r, "n0 applies", quiet, at+span); len(l) > 0 {
				t.Errorf("a partitioned node applied requests: %v", l)
			}
			if len(linesIn(r, "(partition)", at, at+span)) == 0 {
				t.Error("no message was dropped by the partition")
			}
		}},
		{"one-way partition", faults.Event{At: at, Kind: faults.Partition, Nodes: []int{0}, For: span, OneWay: true}, "one-way=true", func(t *testing.T, r Result) {
			if len(linesIn(r, "n0 applies", quiet, at+span)) == 0 || len(linesIn(r, "drop reply n0->", quiet, at+span)) == 0 {
				t.Error("a one-way cut node should apply requests and lose its replies")
			}
		}},
		{"clog", faults.Event{At: at, Kind: faults.Clog, Node: 0, For: span}, "!! clog n0", func(t *testing.T, r Result) {
			if l := linesIn(r, "n0 applies", quiet, at+span); len(l) > 0 {
				t.Errorf("a clogged node applied requests: %v", l)
			}
			if len(linesIn(r, "n0 applies", at+span, at+span+1)) == 0 {
				t.Error("the held-back requests should be applied the instant the clog ends")
			}
		}},
		{"host clock jump", faults.Event{At: at, Kind: faults.ClockJump, Target: faults.HostProcess, Index: 0, Delta: 90 * time.Second}, "!! clock of host 0", nil},
		{"node clock jump", faults.Event{At: at, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 1, Delta: -30 * time.Second}, "!! clock of node 1", nil},
		{"pause", faults.Event{At: at, Kind: faults.Pause, Client: 0, For: span}, "!! pause h0/t0", func(t *testing.T, r Result) {
			for _, e := range r.History.Events {
				if e.Client == 0 && e.Time > int64(at) && e.Time < int64(at+span) && e.Kind != model.BeliefEnd {
					t.Errorf("paused client recorded %s at %s", e.Kind, fmtTime(e.Time))
				}
			}
			if l := linesIn(r, "h0/t0->", at, at+span); len(l) > 0 {
				t.Errorf("paused client sent messages: %v", l)
			}
		}},
		{"pause in acquire", faults.Event{At: at, Kind: faults.Pause, Client: 0, For: span, Point: faults.InAcquire}, "!! pause h0/t0 for 40.000s at its next call inside acquire", func(t *testing.T, r Result) {
			var p model.PointPause
			for _, x := range r.History.Pauses {
				if x.Point == string(faults.InAcquire) {
					p = x
				}
			}
			if p.Client != 0 || p.Time < int64(at) || p.For != int64(span) {
				t.Fatalf("no in-acquire pause of h0/t0 from %s for %s recorded: %+v", fmtTime(int64(at)), fmtTime(int64(span)), r.History.Pauses)
			}
			// It struck inside an acquire: the acquire in flight then took
			// the whole pause, and nothing of h0/t0 happened meanwhile.
			var call int64 = -1
			for _, e := range r.History.Events {
				switch {
				case e.Client != 0:
				case e.Kind == model.AcquireCall && e.Time <= p.Time:
					call = e.Time
				case e.Kind == model.AcquireReturn && e.Time > p.Time:
					if e.Time < p.Time+p.For {
						t.Errorf("the acquire returned at %s, during the pause", fmtTime(e.Time))
					}
					if call < 0 {
						t.Error("the pause struck outside an acquire")
					}
					return
				}
			}
			t.Error("the paused acquire never returned")
		}},
		{"topology while held", faults.Event{At: at, Kind: faults.Topology, Nodes: []int{2, 3, 4}, Point: faults.WhileHeld}, "!! topology of the key becomes [2 3 4]", func(t *testing.T, r Result) {
			if len(r.History.Moves) != 1 {
				t.Fatalf("moves %+v, want one", r.History.Moves)
			}
			mv := r.History.Moves[0]
			held := false // at At if a lock was held then, else at the next grant
			for _, h := range model.Holds(r.History) {
				held = held || (h.StartTime <= mv.Time && mv.Time < h.EndTime)
			}
			if mv.Time < int64(at) || !held {
				t.Errorf("the key moved at %s, not while a lock was held at or after %s", fmtTime(mv.Time), fmtTime(int64(at)))
			}
		}},
		{"topology", faults.Event{At: at, Kind: faults.Topology, Nodes: []int{2, 3, 4}}, "!! topology", func(t *testing.T, r Result) {
			if l := append(linesIn(r, "n0 applies", at+time.Second, time.Hour), linesIn(r, "n1 applies", at+time.Second, time.Hour)...); len(l) > 0 {
				t.Errorf("nodes that left the topology still serve the key: %v", l[0])
			}
			if len(linesIn(r, "n3 applies", at, time.Hour)) == 0 {
				t.Error("a node that joined the topology was never used")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := faultRun(t, faults.Plan{Events: []faults.Event{tc.event}})
			if r.TraceHash == base.TraceHash {
				t.Errorf("the hash did not change: %x", r.TraceHash)
			}
			if len(linesIn(r, tc.announce, 0, time.Hour)) == 0 {
				t.Errorf("no trace line announces the fault with %q", tc.announce)
			}
			// A clock jump changes what clients and nodes read, which this
			// workload only sometimes acts on: TestClockJumps checks it exactly.
			if tc.event.Kind != faults.ClockJump && strings.Join(effects(r), "\n") == strings.Join(effects(base), "\n") {
				t.Error("the fault was announced but changed nothing else in the trace")
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// A durable node keeps its items across a crash; a volatile one restarts
// empty (and in both, its version counter goes on).
func TestCrashWipeForgetsOnlyVolatileNodes(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		plan := faults.Plan{Events: []faults.Event{{At: 10 * time.Millisecond, Kind: faults.Crash, Node: 0, For: time.Second, Wipe: wipe}}}
		var before, after algorithm.Item
		var readErr error
		c := netConfig()
		c.Duration = time.Minute
		runScripts(t, c, plan, func(env algorithm.Env) {
			n0 := env.Topology(LockKey)[0]
			_ = n0.WriteIfDoesNotExistsOrSameServer("k_lock", "h0", time.Minute)
			before, _ = n0.ReadKey("k_lock")
			env.Sleep(2 * time.Second)
			_, readErr = n0.ReadKey("k_lock")
			_ = n0.WriteIfDoesNotExistsOrSameServer("k_lock", "h0", time.Minute)
			after, _ = n0.ReadKey("k_lock")
		})
		if kept := readErr == nil; kept == wipe {
			t.Errorf("wipe=%v: item kept across the crash: %v", wipe, kept)
		}
		if after.Version <= before.Version {
			t.Errorf("wipe=%v: version %d after the restart, %d before: versions must not repeat", wipe, after.Version, before.Version)
		}
	}
}

// Steady faults: network settings and BUGGIFY points change the run too.
func TestSteadyFaultsChangeTheRun(t *testing.T) {
	base := faultRun(t, faults.Plan{})
	for name, plan := range map[string]faults.Plan{
		"more loss":     {Network: faults.Network{LossPPM: 100_000}},
		"duplicates":    {Network: faults.Network{DuplicatePPM: 100_000}},
		"reply loss":    {Network: faults.Network{ReplyLossPPM: 100_000}},
		"extra latency": {Network: faults.Network{ExtraLatencyMax: 300 * time.Millisecond}},
		"skew":          {Clocks: []faults.Clock{{Kind: faults.HostProcess, Index: 1, Offset: 5 * time.Second, DriftPPM: 50_000}}},
		"points":        {Points: faults.Points{PausePPM: 500_000, PauseFor: 3 * time.Second}},
	} {
		if r := faultRun(t, plan); r.TraceHash == base.TraceHash {
			t.Errorf("%s: the hash did not change", name)
		}
	}
}

// A host clock jump moves what Env.Now reads; a node clock jump moves the
// node-side TTL: forwards it expires items early, backwards it keeps them.
func TestClockJumps(t *testing.T) {
	jump := func(target faults.ProcessKind, delta time.Duration) faults.Plan {
		return faults.Plan{Events: []faults.Event{{At: time.Second, Kind: faults.ClockJump, Target: target, Index: 0, Delta: delta}}}
	}
	var before, after time.Duration
	runScripts(t, netConfig(), jump(faults.HostProcess, time.Minute), func(env algorithm.Env) {
		before = env.Now()
		env.Sleep(2 * time.Second)
		after = env.Now()
	})
	if after-before != 2*time.Second+time.Minute {
		t.Errorf("host clock advanced %v across a +1m jump and a 2s sleep, want 1m2s", after-before)
	}
	for _, tc := range []struct {
		delta   time.Duration
		readAt  time.Duration
		wantErr error
	}{
		{0, 5 * time.Second, nil},                                     // 10s TTL, read at 5s: live
		{20 * time.Second, 5 * time.Second, algorithm.ErrKeyNotFound}, // the node's clock reads 25s
		{0, 15 * time.Second, algorithm.ErrKeyNotFound},               // expired on time
		{-20 * time.Second, 15 * time.Second, nil},                    // the node's clock reads -5s
	} {
		err := errors.New("the script did not finish")
		plan := faults.Plan{}
		if tc.delta != 0 {
			plan = jump(faults.NodeProcess, tc.delta)
		}
		c := netConfig()
		c.Duration = time.Minute
		runScripts(t, c, plan, func(env algorithm.Env) {
			n0 := env.Topology(LockKey)[0]
			if _, err := n0.SetIfAbsentTTL("k", "h0", 10*time.Second); err != nil {
				t.Errorf("set: %v", err)
			}
			env.Sleep(tc.readAt - env.Now())
			_, err = n0.ReadKey("k")
		})
		if err != tc.wantErr {
			t.Errorf("node jump %v, read at %v of a 10s TTL item: %v, want %v", tc.delta, tc.readAt, err, tc.wantErr)
		}
	}
}

// Crash windows on one node may overlap: the node stays down until the last
// one ends, not the first (a restart does not end another crash).
func TestOverlappingCrashesKeepTheNodeDown(t *testing.T) {
	plan := faults.Plan{Events: []faults.Event{
		{At: 10 * time.Second, Kind: faults.Crash, Node: 0, For: 10 * time.Second},
		{At: 15 * time.Second, Kind: faults.Crash, Node: 0, For: 20 * time.Second, Wipe: true},
	}}
	r := faultRun(t, plan)
	if l := linesIn(r, "n0 applies", 10*time.Second, 35*time.Second); len(l) > 0 {
		t.Fatalf("n0 applied requests while a crash window was still open: %v", l[0])
	}
	if len(linesIn(r, "n0 refuses", 20*time.Second, 35*time.Second)) == 0 {
		t.Fatal("n0 should refuse between the first crash's end and the second's")
	}
	if len(linesIn(r, "n0 applies", 35*time.Second, time.Hour)) == 0 {
		t.Fatal("n0 should apply again once the last crash ended")
	}
}

// A pause that waits for a call inside an acquire heals when it ends, which
// may be after the plan's At + For: liveness is judged from then on.
func TestPauseInAcquireHealsWhenItEnds(t *testing.T) {
	at, span := 30*time.Second, 20*time.Second
	r := faultRun(t, faults.Plan{Events: []faults.Event{{At: at, Kind: faults.Pause, Client: 1, For: span, Point: faults.InAcquire}}})
	if len(r.History.Pauses) != 1 {
		t.Fatalf("want one pause, got %+v", r.History.Pauses)
	}
	p := r.History.Pauses[0]
	if want := p.Time + p.For; p.Time <= int64(at) || r.History.Healed != want {
		t.Fatalf("pause from %s: healed at %s, want %s", fmtTime(p.Time), fmtTime(r.History.Healed), fmtTime(want))
	}
}

// A topology change that waits for a lock to be held, at an instant no
// lock is, strikes at the next grant.
func TestTopologyWhileHeldWaitsForAGrant(t *testing.T) {
	r := faultRun(t, faults.Plan{Events: []faults.Event{{At: 0, Kind: faults.Topology, Nodes: []int{2, 3, 4}, Point: faults.WhileHeld}}})
	var first int64 = -1
	for _, e := range r.History.Events {
		if e.Kind == model.AcquireReturn && e.Granted {
			first = e.Time
			break
		}
	}
	if len(r.History.Moves) != 1 || first <= 0 || r.History.Moves[0].Time != first {
		t.Fatalf("moves %+v, first grant at %d: want the key moved at the first grant", r.History.Moves, first)
	}
}
