//go:build unix

package explore

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/internal/cputime"
)

// The default scenario written the way a Go user would without locksim:
// the original algorithm in goroutines under testing/synctest (whose fake
// clock jumps whenever every goroutine in the bubble is blocked), against a
// hand-rolled fake DHT whose nodes are goroutines serving a channel.
// Latency is time.Sleep, the RPC timeout a select on time.After.
//
// It is fault-free: faults are what the hand-rolled version does not have
// (no loss, crashes, partitions, skew, pauses). So the comparison is on the
// fault-free default scenario; BenchmarkDefaultScenarioVsSynctest also
// reports locksim under every fault class.

// fakeOp is one primitive of the fake DHT (and of the protected counter).
type fakeOp uint8

const (
	fakeWrite  fakeOp = iota + 1 // write-if-absent-or-same
	fakeRead                     // read with version
	fakeRemove                   // remove-if-version
	fakeCounterRead
	fakeCounterWrite
)

type fakeRequest struct {
	op      fakeOp
	key     string
	owner   string
	expiry  time.Duration
	version uint64
	value   int64
	reply   chan fakeReply // buffered: a late reply never blocks its node
}

type fakeReply struct {
	item  algorithm.Item
	value int64
	err   error
}

// fakeNode is one DHT node (or the protected counter): a goroutine that
// applies requests one at a time, so every primitive is atomic.
type fakeNode struct {
	name    string
	reqs    chan fakeRequest
	items   map[string]algorithm.Item
	version uint64 // node-wide, never reused
	counter int64
}

func (n *fakeNode) apply(r fakeRequest) fakeReply {
	it, ok := n.items[r.key]
	switch r.op {
	case fakeWrite:
		if ok && it.Owner != r.owner {
			return fakeReply{err: algorithm.ErrKeyAlreadyExists}
		}
		n.version++
		it = algorithm.Item{Key: r.key, Owner: r.owner, Expiry: r.expiry, Version: n.version}
		n.items[r.key] = it
		return fakeReply{item: it}
	case fakeRead:
		if !ok {
			return fakeReply{err: algorithm.ErrKeyNotFound}
		}
		return fakeReply{item: it}
	case fakeRemove:
		if !ok || it.Version != r.version {
			return fakeReply{err: algorithm.ErrKeyVersionChanged}
		}
		delete(n.items, r.key)
		return fakeReply{}
	case fakeCounterRead:
		return fakeReply{value: n.counter}
	case fakeCounterWrite:
		n.counter = r.value
		return fakeReply{}
	}
	panic("fake DHT: unknown op")
}

// serve runs the node until done closes; each reply travels on its own
// goroutine for the reply's latency, so replies overlap as on a network.
func (n *fakeNode) serve(done <-chan struct{}, net latency, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	for {
		select {
		case r := <-n.reqs:
			rep, d := n.apply(r), net.draw(rnd)
			go func() {
				time.Sleep(d)
				r.reply <- rep
			}()
		case <-done:
			return
		}
	}
}

// latency is sim.Config's one-way latency: uniform in [min, max], and 1% of
// messages up to tail longer.
type latency struct{ min, max, tail time.Duration }

func (l latency) draw(r *rand.Rand) time.Duration {
	d := l.min + time.Duration(r.Int64N(int64(l.max-l.min)+1))
	if l.tail > 0 && r.IntN(100) == 0 {
		d += time.Duration(r.Int64N(int64(l.tail) + 1))
	}
	return d
}

// fakeDHT is the cluster: the nodes, the counter, the deployment's knobs.
type fakeDHT struct {
	cfg      sim.Config
	net      latency
	nodes    []*fakeNode
	resource *fakeNode
	done     chan struct{}
	start    time.Time
}

func newFakeDHT(cfg sim.Config) *fakeDHT {
	d := &fakeDHT{cfg: cfg, net: latency{cfg.LatencyMin, cfg.LatencyMax, cfg.LatencyTail},
		done: make(chan struct{}), start: time.Now()}
	for i := range cfg.Nodes {
		d.nodes = append(d.nodes, &fakeNode{name: "n" + string(rune('0'+i)), reqs: make(chan fakeRequest), items: map[string]algorithm.Item{}})
	}
	d.resource = &fakeNode{name: "resource", reqs: make(chan fakeRequest)}
	for i, n := range append(d.nodes, d.resource) {
		go n.serve(d.done, d.net, uint64(1000+i))
	}
	return d
}

// fakeClient is one client thread: its algorithm.Env, and the stubs through
// which it calls nodes.
type fakeClient struct {
	dht      *fakeDHT
	host     string
	name     string
	netRand  *rand.Rand // request latencies
	workRand *rand.Rand // hold and think times
	algoRand *rand.Rand // handed to the algorithm
	topology []algorithm.Server
	rpcs     int64
}

func newFakeClient(d *fakeDHT, host, thread int, seed uint64) *fakeClient {
	c := &fakeClient{dht: d, host: "h" + string(rune('0'+host)),
		netRand:  rand.New(rand.NewPCG(seed, 1)),
		workRand: rand.New(rand.NewPCG(seed, 2)),
		algoRand: rand.New(rand.NewPCG(seed, 3))}
	c.name = c.host + "/t" + string(rune('0'+thread))
	for _, n := range d.nodes[:d.cfg.Replication] {
		c.topology = append(c.topology, fakeServer{c, n})
	}
	return c
}

// call is one RPC: the request travels for its latency, the node applies
// it, the reply travels back; the client gives up after the RPC timeout.
func (c *fakeClient) call(n *fakeNode, r fakeRequest) fakeReply {
	c.rpcs++
	r.reply = make(chan fakeReply, 1)
	d, done := c.dht.net.draw(c.netRand), c.dht.done
	go func() {
		time.Sleep(d)
		select {
		case n.reqs <- r:
		case <-done:
		}
	}()
	select {
	case rep := <-r.reply:
		return rep
	case <-time.After(c.dht.cfg.RPCTimeout):
		return fakeReply{err: algorithm.ErrServerDown}
	}
}

// workload is locksim's (sim/workload.go): acquire; if granted, read the
// counter, hold, write it plus one, release; think; until the run ends.
func (c *fakeClient) workload(lock algorithm.Lock) {
	cfg := c.dht.cfg
	for time.Since(c.dht.start) < cfg.Duration {
		if g := lock.Acquire(c, sim.LockKey); g.Granted {
			v := c.call(c.dht.resource, fakeRequest{op: fakeCounterRead}).value
			time.Sleep(c.between(cfg.HoldMin, cfg.HoldMax))
			c.call(c.dht.resource, fakeRequest{op: fakeCounterWrite, value: v + 1})
			lock.Release(c, sim.LockKey, g)
		}
		time.Sleep(c.between(cfg.ThinkMin, cfg.ThinkMax))
	}
}

func (c *fakeClient) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(c.workRand.Int64N(int64(hi-lo)+1))
}

// --- algorithm.Env ---

func (c *fakeClient) Topology(string) []algorithm.Server { return c.topology }
func (c *fakeClient) Now() time.Duration                 { return time.Since(c.dht.start) }
func (c *fakeClient) LocalNow() time.Duration            { return c.Now() }
func (c *fakeClient) HostName() string                   { return c.host }
func (c *fakeClient) ClientName() string                 { return c.name }
func (c *fakeClient) Sleep(d time.Duration)              { time.Sleep(d) }
func (c *fakeClient) Rand() *rand.Rand                   { return c.algoRand }
func (c *fakeClient) TTL() time.Duration                 { return c.dht.cfg.TTL }

// fakeServer is algorithm.Server over the channel RPC: the original's three
// primitives; the others are not part of the fake.
type fakeServer struct {
	c *fakeClient
	n *fakeNode
}

var errNotInFake = errors.New("not implemented by the fake DHT")

func (s fakeServer) Name() string { return s.n.name }

func (s fakeServer) WriteIfDoesNotExistsOrSameServer(key, owner string, expiry time.Duration) error {
	return s.c.call(s.n, fakeRequest{op: fakeWrite, key: key, owner: owner, expiry: expiry}).err
}

func (s fakeServer) ReadKey(key string) (algorithm.Item, error) {
	r := s.c.call(s.n, fakeRequest{op: fakeRead, key: key})
	return r.item, r.err
}

func (s fakeServer) RemoveKey(key string, version uint64) error {
	return s.c.call(s.n, fakeRequest{op: fakeRemove, key: key, version: version}).err
}

func (fakeServer) SetIfAbsentTTL(string, string, time.Duration) (algorithm.Item, error) {
	return algorithm.Item{}, errNotInFake
}
func (fakeServer) CompareAndDelete(string, string) error             { return errNotInFake }
func (fakeServer) Increment(string) (uint64, error)                  { return 0, errNotInFake }
func (fakeServer) RaiseCounter(string, uint64) (uint64, error)       { return 0, errNotInFake }
func (fakeServer) ExtendIfOwner(string, string, time.Duration) error { return errNotInFake }
func (fakeServer) LeaseGrant(time.Duration) (uint64, error)          { return 0, errNotInFake }
func (fakeServer) LeaseKeepAlive(uint64) error                       { return errNotInFake }
func (fakeServer) LeaseRevoke(uint64) error                          { return errNotInFake }
func (fakeServer) CreateWithLease(string, string, uint64) (algorithm.Item, error) {
	return algorithm.Item{}, errNotInFake
}
func (fakeServer) FirstCreated(string) (algorithm.Item, error) { return algorithm.Item{}, errNotInFake }
func (fakeServer) LastCreatedBefore(string, uint64) (algorithm.Item, error) {
	return algorithm.Item{}, errNotInFake
}
func (fakeServer) Delete(string) error { return errNotInFake }

// synctestRun is one hand-rolled run of cfg: every client thread runs the
// original until cfg.Duration of fake time has passed. It returns the RPCs
// made and the fake time the run took (the last client finishes its
// iteration, so a little over cfg.Duration).
type synctestRun struct {
	rpcs      int64
	simulated time.Duration
	counter   int64
}

func runSynctest(t *testing.T, cfg sim.Config, seed uint64) (out synctestRun) {
	synctest.Test(t, func(t *testing.T) {
		d := newFakeDHT(cfg)
		var wg sync.WaitGroup
		var clients []*fakeClient
		for h := range cfg.Hosts {
			for th := range cfg.ThreadsPerHost {
				c := newFakeClient(d, h, th, seed*1000+uint64(len(clients)))
				clients = append(clients, c)
				wg.Go(func() { c.workload(algorithm.Original{}) })
			}
		}
		wg.Wait()
		out.simulated = time.Since(d.start)
		for _, c := range clients {
			out.rpcs += c.rpcs
		}
		out.counter = clients[0].call(d.resource, fakeRequest{op: fakeCounterRead}).value
		close(d.done) // the nodes stop; messages in flight drain before Test returns
	})
	return out
}

// inBubble runs f under a *testing.T from a benchmark: testing.RunTests
// (exported for the go command) makes one, as sim's BenchmarkPingPong does.
// Its matcher accepts every name so that -run, usually set to match nothing
// when benchmarking, cannot skip it.
func inBubble(b *testing.B, name string, f func(t *testing.T)) {
	b.Helper()
	all := func(string, string) (bool, error) { return true, nil }
	if !testing.RunTests(all, []testing.InternalTest{{Name: name, F: f}}) {
		b.Fatalf("%s failed", name)
	}
}

// TestSynctestBaselineRuns keeps the baseline honest: a short run makes
// RPCs, increments the counter and ends near its duration.
func TestSynctestBaselineRuns(t *testing.T) {
	cfg := defaultScenario().Config
	cfg.Duration = 20 * time.Second
	out := runSynctest(t, cfg, 1)
	if out.rpcs == 0 || out.counter == 0 {
		t.Fatalf("%d RPCs, counter %d: the fake world did nothing", out.rpcs, out.counter)
	}
	if out.simulated < cfg.Duration || out.simulated > cfg.Duration+10*time.Second {
		t.Errorf("the run took %v of fake time, want about %v", out.simulated, cfg.Duration)
	}
}

// BenchmarkDefaultScenarioVsSynctest runs, per iteration, one fault-free
// seed of the default scenario in locksim (run and check, as a sweep does;
// and sim.Run alone), one hand-rolled synctest run of the same config, and
// one locksim seed under every fault class, each timed in CPU seconds.
// x-faster is locksim's simulated seconds per CPU second over synctest's
// (checked; x-faster-sim-only without the checkers). The target is 20x.
func BenchmarkDefaultScenarioVsSynctest(b *testing.B) {
	none, all := defaultScenario(faults.ClassNone), defaultScenario(faults.ClassAll)
	v := none.Variant
	simulated := none.Config.Duration.Seconds()
	var checkedCPU, simCPU, goCPU, allCPU, goSimulated float64
	var checkedRPCs, simRPCs, goRPCs, allRPCs int64
	seed := uint64(0)
	var buf sim.Buffers // sim.Run reuses memory from seed to seed, as a sweep worker does
	for b.Loop() {
		seed++
		// Checked runs are what a sweep pays: the history is checked and its
		// memory reused, not kept. They count their round trips from an
		// untimed run of the same seed (a round trip is a request and a reply).
		cpu := cputime.Start()
		if _, err := RunSeed(none, seed, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
		checkedCPU += cpu.Seconds()

		cpu = cputime.Start()
		res, err := sim.Run(sim.Scenario{Config: none.Config, Variant: v, Seed: seed, Plan: none.PlanFor(seed), Buffers: &buf})
		if err != nil {
			b.Fatal(err)
		}
		simCPU += cpu.Seconds()
		simRPCs += res.History.Messages / 2
		checkedRPCs += res.History.Messages / 2

		cpu = cputime.Start()
		var g synctestRun
		inBubble(b, "DefaultScenarioSynctest", func(t *testing.T) { g = runSynctest(t, none.Config, seed) })
		goCPU += cpu.Seconds()
		goRPCs += g.rpcs
		goSimulated += g.simulated.Seconds()

		cpu = cputime.Start()
		if _, err := RunSeed(all, seed, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
		allCPU += cpu.Seconds()
		res, err = sim.Run(sim.Scenario{Config: all.Config, Variant: v, Seed: seed, Plan: all.PlanFor(seed), Buffers: &buf})
		if err != nil {
			b.Fatal(err)
		}
		allRPCs += res.History.Messages / 2
	}
	n := float64(b.N)
	b.ReportMetric(n*simulated/checkedCPU, "locksim-sim-s/cpu-s")
	b.ReportMetric(n*simulated/simCPU, "locksim-sim-only-sim-s/cpu-s")
	b.ReportMetric(goSimulated/goCPU, "synctest-sim-s/cpu-s")
	b.ReportMetric(n*simulated/allCPU, "locksim-all-sim-s/cpu-s")
	b.ReportMetric(float64(checkedRPCs)/checkedCPU, "locksim-rpc/cpu-s")
	b.ReportMetric(float64(simRPCs)/simCPU, "locksim-sim-only-rpc/cpu-s")
	b.ReportMetric(float64(goRPCs)/goCPU, "synctest-rpc/cpu-s")
	b.ReportMetric(float64(allRPCs)/allCPU, "locksim-all-rpc/cpu-s")
	b.ReportMetric(float64(checkedRPCs)/n, "locksim-rpc/run")
	b.ReportMetric(float64(goRPCs)/n, "synctest-rpc/run")
	b.ReportMetric((n*simulated/checkedCPU)/(goSimulated/goCPU), "x-faster")
	b.ReportMetric((n*simulated/simCPU)/(goSimulated/goCPU), "x-faster-sim-only")
}

// BenchmarkSynctestBaseline runs the hand-rolled synctest version alone, so
// its cost can be counted apart from locksim's (for instance in instructions
// under valgrind --tool=callgrind, which no co-tenant disturbs; compare with
// BenchmarkDefaultScenario/sim-only). See docs/PERFORMANCE.md.
func BenchmarkSynctestBaseline(b *testing.B) {
	none := defaultScenario(faults.ClassNone)
	seed := uint64(0)
	for b.Loop() {
		seed++
		inBubble(b, "SynctestBaseline", func(t *testing.T) { runSynctest(t, none.Config, seed) })
	}
}
