package sim

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/internal/cputime"
)

// The kernel's speed, measured two ways in one run: locksim's event loop
// with coroutine clients, and the same ping-pong written the way a Go user
// would without locksim (goroutines and channels under testing/synctest,
// whose fake clock jumps when every goroutine is blocked). The ratio is the
// point: the targets are 2M events/s per core and 10x synctest.

const (
	pingLatency = time.Millisecond // one way, fixed: every round trip takes 2ms
	pingRounds  = 100_000          // round trips per benchmark iteration
)

// pingLock's Acquire never returns: it reads the key on its only node, over
// and over, counting replies. Each round trip is one RPC: a request, a
// reply and a (stale) timeout event.
type pingLock struct{ replies *int64 }

func (l pingLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	s := env.Topology(key)[0]
	for {
		if _, err := s.ReadKey(key); err == algorithm.ErrKeyNotFound {
			*l.replies++
		}
	}
}

func (pingLock) Release(algorithm.Env, string, algorithm.Grant) {}

// pingWorld is one node, one client, a fixed latency, and a duration of
// exactly rounds round trips.
func pingScenario(rounds int, replies *int64) Scenario {
	c := DefaultConfig()
	c.Nodes, c.Replication, c.Hosts, c.ThreadsPerHost = 1, 1, 1, 1
	c.LatencyMin, c.LatencyMax, c.LatencyTail = pingLatency, pingLatency, 0
	c.ThinkMin, c.ThinkMax = 0, 0
	c.Duration = time.Duration(rounds)*2*pingLatency + pingLatency
	c.MaxEvents = int64(rounds)*4 + 100
	c.MaxCallsNoSleep = int64(rounds) + 1 // every round trip is one call of one Acquire
	v := algorithm.Variant{Name: "ping", New: func() algorithm.Lock { return pingLock{replies} }}
	return Scenario{Config: c, Variant: v, Seed: 1}
}

// pingLocksim runs b.N ping-pong worlds and returns events and round trips.
func pingLocksim(b *testing.B) (events, rounds int64) {
	for b.Loop() {
		var replies int64
		res, err := Run(pingScenario(pingRounds, &replies))
		if err != nil {
			b.Fatal(err)
		}
		if res.History.Abort != nil {
			b.Fatalf("ping-pong aborted: %s", res.History.Abort.Detail)
		}
		if replies != pingRounds {
			b.Fatalf("%d round trips, want %d", replies, pingRounds)
		}
		events += res.Events
		rounds += replies
	}
	return events, rounds
}

// pingSynctest is the same ping-pong as a Go user writes it: a client and a
// server goroutine, requests and replies over channels, latency as
// time.Sleep, an RPC timeout as a select on time.After, a map as the store.
// synctest's bubble makes the sleeps free.
func pingSynctest(b *testing.B) (rounds int64) {
	for b.Loop() {
		rounds += pingSynctestOnce(b)
	}
	return rounds
}

func pingSynctestOnce(b *testing.B) (rounds int64) {
	inBubble(b, func(t *testing.T) {
		type req struct{ key string }
		type rep struct{ found bool }
		reqs, reps := make(chan req), make(chan rep)
		store := map[string]string{}
		go func() { // the node
			for r := range reqs {
				time.Sleep(pingLatency) // request in flight
				_, ok := store[r.key]
				go func() { // reply in flight
					time.Sleep(pingLatency)
					reps <- rep{found: ok}
				}()
			}
		}()
		n := 0
		for n < pingRounds {
			reqs <- req{key: LockKey}
			select {
			case r := <-reps:
				if !r.found {
					n++
				}
			case <-time.After(200 * time.Millisecond):
				t.Fatal("timeout")
			}
		}
		close(reqs)
		rounds += int64(n)
	})
	return rounds
}

// BenchmarkPingPong reports each side alone. Rates are per wall-clock
// second (events/s, rpc/s) and per second of CPU the process used
// (events/cpu-s, rpc/cpu-s): on a loaded machine only the second is stable.
func BenchmarkPingPong(b *testing.B) {
	b.Run("locksim", func(b *testing.B) {
		cpu := cputime.Start()
		events, rounds := pingLocksim(b)
		report(b, cpu.Seconds(), "events", events)
		report(b, cpu.Seconds(), "rpc", rounds)
	})
	b.Run("synctest", func(b *testing.B) {
		cpu := cputime.Start()
		rounds := pingSynctest(b)
		report(b, cpu.Seconds(), "rpc", rounds)
	})
}

// BenchmarkPingPongRatio runs both ping-pongs in every iteration, timing
// each, so that whatever else loads the machine loads both alike; x-faster
// is locksim's round trips per CPU second over synctest's.
func BenchmarkPingPongRatio(b *testing.B) {
	var simEvents, simRounds, goRounds int64
	var simCPU, goCPU float64
	for b.Loop() {
		cpu := cputime.Start()
		var replies int64
		res, err := Run(pingScenario(pingRounds, &replies))
		if err != nil || replies != pingRounds {
			b.Fatalf("locksim ping-pong: %v, %d round trips", err, replies)
		}
		simCPU += cpu.Seconds()
		simEvents += res.Events
		simRounds += replies

		cpu = cputime.Start()
		goRounds += pingSynctestOnce(b)
		goCPU += cpu.Seconds()
	}
	b.ReportMetric(float64(simEvents)/simCPU, "events/cpu-s")
	b.ReportMetric(float64(simRounds)/simCPU, "locksim-rpc/cpu-s")
	b.ReportMetric(float64(goRounds)/goCPU, "synctest-rpc/cpu-s")
	b.ReportMetric((float64(simRounds)/simCPU)/(float64(goRounds)/goCPU), "x-faster")
}

// BenchmarkManyClients is the default world with 3 hosts of 4 threads each
// running the naive lock under swarm plans of every fault class: what a
// sweep does, one seed per iteration.
func BenchmarkManyClients(b *testing.B) {
	c := DefaultConfig()
	c.Hosts, c.ThreadsPerHost = 3, 4
	shape := shapeOf(c)
	var events, rpcs int64
	cpu := cputime.Start()
	seed := uint64(0)
	for b.Loop() {
		seed++
		plan := faults.Swarm(seed, []faults.Class{faults.ClassAll}, shape)
		res, err := Run(Scenario{Config: c, Variant: naive, Seed: seed, Plan: plan})
		if err != nil {
			b.Fatal(err)
		}
		events += res.Events
		rpcs += res.History.Messages / 2 // a round trip is a request and a reply
	}
	report(b, cpu.Seconds(), "events", events)
	report(b, cpu.Seconds(), "rpc", rpcs)
}

// report adds n per wall second and per CPU second as metrics.
func report(b *testing.B, cpuSeconds float64, what string, n int64) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), what+"/s")
	b.ReportMetric(float64(n)/cpuSeconds, what+"/cpu-s")
}

// inBubble runs f under synctest.Test from a benchmark. synctest.Test wants
// a *testing.T, which a benchmark does not have; testing.RunTests (exported
// for the go command) makes one. Its matcher accepts every name so that the
// -run flag, usually set to match nothing when benchmarking, cannot skip it.
func inBubble(b *testing.B, f func(t *testing.T)) {
	b.Helper()
	all := func(string, string) (bool, error) { return true, nil }
	test := testing.InternalTest{Name: "PingPongSynctest", F: func(t *testing.T) { synctest.Test(t, f) }}
	if !testing.RunTests(all, []testing.InternalTest{test}) {
		b.Fatal("the synctest ping-pong failed")
	}
}

// BenchmarkQueue is the event queue at the ping-pong's steady state: about a
// hundred pending events (mostly stale RPC timeouts), one pop and one push
// per event.
func BenchmarkQueue(b *testing.B) {
	var q queue
	r := newStream(1, 1)
	for range 100 {
		q.push(between(&r, 0, 200), evTimeout, 0, 0)
	}
	for b.Loop() {
		e := q.pop()
		q.push(e.at+between(&r, 1, 200), evTimeout, 0, 0)
	}
}
