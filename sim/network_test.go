package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
)

// scriptLock runs a test's script once, in client c's Acquire, then idles
// until the run ends: a way to drive exact RPCs through the real kernel.
type scriptLock struct {
	run  func(env algorithm.Env)
	done bool
}

func (l *scriptLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	if !l.done && l.run != nil {
		l.done = true
		l.run(env)
	}
	for {
		env.Sleep(time.Hour)
	}
}

func (l *scriptLock) Release(algorithm.Env, string, algorithm.Grant) {}

// netConfig: two nodes, two single-thread hosts, a fixed 1ms one-way
// latency (every round trip takes exactly 2ms), clients start at once; the
// key on n0 then n1 (PlacementFirst), so a script can name a node by index.
func netConfig() Config {
	c := DefaultConfig()
	c.Placement = PlacementFirst
	c.Nodes, c.Replication, c.Hosts, c.ThreadsPerHost = 2, 2, 2, 1
	c.LatencyMin, c.LatencyMax, c.LatencyTail = time.Millisecond, time.Millisecond, 0
	c.ThinkMin, c.ThinkMax = 0, 0
	c.Duration = 10 * time.Second
	return c
}

// runScripts runs scripts[i] as client i and returns the finished world.
func runScripts(t *testing.T, c Config, plan faults.Plan, scripts ...func(env algorithm.Env)) *world {
	t.Helper()
	made := 0
	v := algorithm.Variant{Name: "script", New: func() algorithm.Lock {
		l := &scriptLock{}
		if made < len(scripts) {
			l.run = scripts[made]
		}
		made++
		return l
	}}
	w, err := newWorld(Scenario{Config: c, Variant: v, Plan: plan, Seed: 3, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	w.loop()
	w.finish()
	if w.abort != nil {
		t.Fatalf("run aborted: %s", w.abort.Detail)
	}
	return w
}

// rpcTimed is one call's error and how long it took on the (perfect) host clock.
type rpcTimed struct {
	err     error
	elapsed time.Duration
}

func timed(env algorithm.Env, call func() error) rpcTimed {
	start := env.Now()
	err := call()
	return rpcTimed{err, env.Now() - start}
}

func (w *world) traceHas(substr string) bool {
	for _, e := range w.trace {
		if strings.Contains(e.What, substr) {
			return true
		}
	}
	return false
}

const roundTrip = 2 * time.Millisecond

func TestNetworkRoundTripWithoutFaults(t *testing.T) {
	var r rpcTimed
	runScripts(t, netConfig(), faults.Plan{}, func(env algorithm.Env) {
		r = timed(env, func() error { _, err := env.Topology(LockKey)[0].ReadKey("x"); return err })
	})
	if r.err != algorithm.ErrKeyNotFound || r.elapsed != roundTrip {
		t.Fatalf("read of a missing key: %v after %v, want KeyNotFound after %v", r.err, r.elapsed, roundTrip)
	}
}

func TestNetworkLossDropsMessages(t *testing.T) {
	c := netConfig()
	var r rpcTimed
	w := runScripts(t, c, faults.Plan{Network: faults.Network{LossPPM: faults.Million}}, func(env algorithm.Env) {
		r = timed(env, func() error { _, err := env.Topology(LockKey)[0].ReadKey("x"); return err })
	})
	if r.err != algorithm.ErrServerDown || r.elapsed != c.RPCTimeout {
		t.Fatalf("read under total loss: %v after %v, want ServerDown after the %v timeout", r.err, r.elapsed, c.RPCTimeout)
	}
	if !w.traceHas("(loss)") || w.traceHas("n0 applies") {
		t.Fatalf("the request should be dropped as lost and never applied; trace:\n%v", w.trace)
	}
}

// A lost reply is the ambiguous case: the write happened, the client sees
// ServerDown.
func TestNetworkReplyLossAppliesButReportsServerDown(t *testing.T) {
	c := netConfig()
	var r rpcTimed
	w := runScripts(t, c, faults.Plan{Network: faults.Network{ReplyLossPPM: faults.Million}}, func(env algorithm.Env) {
		r = timed(env, func() error {
			return env.Topology(LockKey)[0].WriteIfDoesNotExistsOrSameServer("k_lock", "me", time.Minute)
		})
	})
	if r.err != algorithm.ErrServerDown || r.elapsed != c.RPCTimeout {
		t.Fatalf("write with its reply lost: %v after %v, want ServerDown after %v", r.err, r.elapsed, c.RPCTimeout)
	}
	if e, ok := w.nodes[0].store.lookup("k_lock"); !ok || e.owner != "me" {
		t.Fatalf("the write must have been applied on n0: %+v", w.nodes[0].store.entries)
	}
}

func TestNetworkDuplicatesApplyTwice(t *testing.T) {
	for _, tc := range []struct {
		dup        faults.PPM
		minSecond  uint64
		maxSecond  uint64
		wantOnNode uint64
	}{
		{0, 2, 2, 2},
		{faults.Million, 3, 4, 4}, // each increment request arrives twice
	} {
		var first, second uint64
		w := runScripts(t, netConfig(), faults.Plan{Network: faults.Network{DuplicatePPM: tc.dup}}, func(env algorithm.Env) {
			s := env.Topology(LockKey)[0]
			first, _ = s.Increment("fence")
			second, _ = s.Increment("fence")
		})
		if first != 1 || second < tc.minSecond || second > tc.maxSecond || w.nodes[0].store.get("fence").counter != tc.wantOnNode {
			t.Errorf("duplicate ppm %d: increments returned %d, %d and left %d on the node; want 1, [%d, %d], %d",
				tc.dup, first, second, w.nodes[0].store.get("fence").counter, tc.minSecond, tc.maxSecond, tc.wantOnNode)
		}
	}
}

// A crashed node's host refuses at once; a partitioned node is silent and
// the client waits for its whole RPC timeout.
func TestNetworkCrashRefusesFastPartitionTimesOut(t *testing.T) {
	c := netConfig()
	crash := faults.Plan{Events: []faults.Event{{At: 0, Kind: faults.Crash, Node: 0}}}
	part := faults.Plan{Events: []faults.Event{{At: 0, Kind: faults.Partition, Nodes: []int{0}, For: time.Minute}}}
	for _, tc := range []struct {
		name string
		plan faults.Plan
		want time.Duration
	}{
		{"crash", crash, roundTrip},
		{"partition", part, c.RPCTimeout},
	} {
		var r rpcTimed
		runScripts(t, c, tc.plan, func(env algorithm.Env) {
			env.Sleep(time.Millisecond) // let the fault at 0 start first
			r = timed(env, func() error { _, err := env.Topology(LockKey)[0].ReadKey("x"); return err })
		})
		if r.err != algorithm.ErrServerDown || r.elapsed != tc.want {
			t.Errorf("%s: read of n0 gave %v after %v, want ServerDown after %v", tc.name, r.err, r.elapsed, tc.want)
		}
	}
}

// A partition cuts the right directions: a symmetric one both ways, a
// one-way one only what leaves the group. Client 0 (host 0) writes to n0
// during the partition and reads back after it heals, which tells whether
// the write was applied.
func TestNetworkPartitionDirections(t *testing.T) {
	c := netConfig()
	heal := time.Second
	for _, tc := range []struct {
		name         string
		nodes, hosts []int
		oneWay       bool
		wantWriteErr error
		wantApplied  bool
		wantOtherErr error // host 1 reading n1 during the partition
	}{
		{"symmetric n0", []int{0}, nil, false, algorithm.ErrServerDown, false, algorithm.ErrKeyNotFound},
		{"one-way n0: requests in, replies cut", []int{0}, nil, true, algorithm.ErrServerDown, true, algorithm.ErrKeyNotFound},
		{"one-way host 0: its requests cut", nil, []int{0}, true, algorithm.ErrServerDown, false, algorithm.ErrKeyNotFound},
		{"symmetric host 1: cut from both nodes", nil, []int{1}, false, nil, true, algorithm.ErrServerDown},
		{"one-way host 1: requests out cut", nil, []int{1}, true, nil, true, algorithm.ErrServerDown},
		{"n0 and host 0 on the same side", []int{0}, []int{0}, false, nil, true, algorithm.ErrKeyNotFound},
		{"one-way n1 and host 1: replies to host 1 from n1 stay inside", []int{1}, []int{1}, true, nil, true, algorithm.ErrKeyNotFound},
	} {
		plan := faults.Plan{Events: []faults.Event{{At: 0, Kind: faults.Partition, Nodes: tc.nodes, Hosts: tc.hosts, OneWay: tc.oneWay, For: heal}}}
		var write rpcTimed
		var readErr, otherErr error
		runScripts(t, c, plan, func(env algorithm.Env) {
			env.Sleep(time.Millisecond)
			n0 := env.Topology(LockKey)[0]
			write = timed(env, func() error { return n0.WriteIfDoesNotExistsOrSameServer("k_lock", "h0", time.Minute) })
			env.Sleep(heal)
			_, readErr = n0.ReadKey("k_lock")
		}, func(env algorithm.Env) { // client 1 on host 1 reads n1 during the partition
			env.Sleep(time.Millisecond)
			_, otherErr = env.Topology(LockKey)[1].ReadKey("x")
		})
		if write.err != tc.wantWriteErr {
			t.Errorf("%s: write during the partition: %v, want %v", tc.name, write.err, tc.wantWriteErr)
		}
		if applied := readErr == nil; applied != tc.wantApplied {
			t.Errorf("%s: write applied=%v (read after heal: %v), want applied=%v", tc.name, applied, readErr, tc.wantApplied)
		}
		if otherErr != tc.wantOtherErr {
			t.Errorf("%s: host 1 reading n1: %v, want %v", tc.name, otherErr, tc.wantOtherErr)
		}
	}
}

// A clogged node holds requests back until the clog ends: slow, not lost.
func TestNetworkClogDelays(t *testing.T) {
	c := netConfig()
	clog := 100 * time.Millisecond // shorter than the RPC timeout
	plan := faults.Plan{Events: []faults.Event{{At: 0, Kind: faults.Clog, Node: 0, For: clog}}}
	var r0, r1 rpcTimed
	runScripts(t, c, plan, func(env algorithm.Env) {
		env.Sleep(time.Millisecond)
		r1 = timed(env, func() error { _, err := env.Topology(LockKey)[1].ReadKey("x"); return err })
		r0 = timed(env, func() error { _, err := env.Topology(LockKey)[0].ReadKey("x"); return err })
	})
	// Sent at 3ms, held from 4ms to 100ms, answered at 101ms.
	if r0.err != algorithm.ErrKeyNotFound || r0.elapsed != clog+time.Millisecond-3*time.Millisecond {
		t.Errorf("read of clogged n0: %v after %v, want KeyNotFound after %v", r0.err, r0.elapsed, clog-2*time.Millisecond)
	}
	if r1.err != algorithm.ErrKeyNotFound || r1.elapsed != roundTrip {
		t.Errorf("read of unclogged n1: %v after %v, want KeyNotFound after %v", r1.err, r1.elapsed, roundTrip)
	}
}

// A reply that lands exactly at the RPC deadline is too late: the timeout
// wins the tie, and a reply one nanosecond earlier is in time. Many calls in
// a row each keep their own deadline.
func TestNetworkTimeoutWinsTieWithReply(t *testing.T) {
	for _, tc := range []struct {
		oneWay time.Duration
		want   error
	}{
		{100 * time.Millisecond, algorithm.ErrServerDown},
		{100*time.Millisecond - 1, algorithm.ErrKeyNotFound},
	} {
		c := netConfig()
		c.LatencyMin, c.LatencyMax = tc.oneWay, tc.oneWay
		c.Duration = time.Minute
		var got []rpcTimed
		runScripts(t, c, faults.Plan{}, func(env algorithm.Env) {
			for range 20 {
				got = append(got, timed(env, func() error { _, err := env.Topology(LockKey)[0].ReadKey("x"); return err }))
			}
		})
		for i, r := range got {
			if want := min(2*tc.oneWay, c.RPCTimeout); r.err != tc.want || r.elapsed != want {
				t.Fatalf("one-way %v, call %d: %v after %v, want %v after %v", tc.oneWay, i, r.err, r.elapsed, tc.want, want)
			}
		}
		if len(got) != 20 {
			t.Fatalf("%d calls finished, want 20", len(got))
		}
	}
}

// latency's precomputed span draws exactly what between draws, and a fixed
// latency draws nothing from the network stream.
func TestLatencyDrawsAsBetween(t *testing.T) {
	for _, lat := range [][2]time.Duration{{time.Millisecond, 5 * time.Millisecond}, {3 * time.Millisecond, 3 * time.Millisecond}, {0, 1}} {
		c := smallConfig()
		c.LatencyMin, c.LatencyMax = lat[0], lat[1]
		w, err := newWorld(Scenario{Config: c, Variant: naive, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		ref := w.netRand
		for range 1000 {
			want := between(&ref, int64(c.LatencyMin), int64(c.LatencyMax))
			if c.LatencyTail > 0 && chance(&ref, 10_000) {
				want += between(&ref, 0, int64(c.LatencyTail))
			}
			if got := w.latency(&message{}); got != want {
				t.Fatalf("latency in [%v, %v] = %d, want %d", lat[0], lat[1], got, want)
			}
		}
		if w.netRand != ref {
			t.Fatalf("latency in [%v, %v] left the network stream elsewhere than between", lat[0], lat[1])
		}
	}
}
