package realredis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	mathrand "math/rand"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/cryptotest"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/etcdnode"
	"github.com/locksim/locksim/sim/redisnode"
)

// Scenario is one run: a lock in a world under a plan, from a seed.
type Scenario struct {
	Config sim.Config
	Lock   Lock
	Seed   uint64
	Plan   faults.Plan
	Trace  bool
}

// Result is a run's history and hash, and what the nodes were sent that
// locksim does not simulate.
type Result struct {
	sim.Result
	Unsupported []string
	// Requests counts the Redis requests the clients sent (handshakes
	// aside); History.Messages counts every message, the protected
	// counter's too.
	Requests int64
}

// RunTest runs sc in a synctest bubble of its own, under t (a bubble needs
// a testing.T: this mode runs from go test). It may be called from several
// goroutines at once.
func RunTest(t *testing.T, sc Scenario) (res Result, err error) {
	if inBubble() {
		return Result{}, errors.New("realredis: RunTest makes a synctest bubble of its own and bubbles do not nest: call it from outside synctest.Test")
	}
	defer func() {
		if r := recover(); r != nil {
			// synctest's own: the bubble could not end.
			if err == nil && res.History.Abort != nil {
				return // the run ended on a finding of the lock's (stopWithin)
			}
			res, err = Result{}, fmt.Errorf("realredis: seed %d: %v (the lock's goroutines were still blocked after its clients stopped, their connections closed, and %s of quiet)", sc.Seed, r, linger)
		}
	}()
	synctest.Test(t, func(bt *testing.T) {
		seedCryptoRand(bt, sc.Seed)
		res, err = Run(sc)
	})
	return res, err
}

// seedCryptoRand makes crypto/rand repeatable for the run in bubble t:
// libraries draw lock values from it (bsm/redislock's tokens before
// Options.Token), and a value is in every request that carries it, so an
// unseeded one makes no run replay. testing/cryptotest sets the process's
// source until t ends; it refuses a test with a parallel ancestor (the
// source is the process's), and then the source stays the system's: such
// a lock's failures are reported as nondeterminism (seedrun.Confirm),
// never as passes.
func seedCryptoRand(t *testing.T, seed uint64) {
	defer func() { _ = recover() }()
	cryptotest.SetGlobalRandom(t, seed^0x63727970746f)
}

// go-redis logs failed dials from its pool to its global logger, with the
// bubble's clock (the year 2000): noise in a test's output. A process
// that runs locksim's Redis mode silences it.
var quietOnce sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// seedGlobalRand makes the global math/rand source repeatable for a run:
// libraries draw from its top-level functions (older redsync releases for
// their retry delay, client-go's jitter), which since Go 1.24 cannot be
// seeded unless GODEBUG has randseednop=0. A run seeds it from its own
// seed, so that a seed replays in a worker process, which runs one seed at
// a time. Runs that share a process at once (InProcess sweeps) share the
// source too: a lock drawing from it then does not replay, and
// seedrun.Confirm reports that as a nondeterminism finding, not a pass.
// math/rand/v2's top-level functions cannot be seeded at all.
func seedGlobalRand(seed uint64) {
	godebugOnce.Do(func() {
		v := os.Getenv("GODEBUG")
		if strings.Contains(v, "randseednop=") {
			return // the user's own setting stands
		}
		if v != "" {
			v += ","
		}
		os.Setenv("GODEBUG", v+"randseednop=0")
	})
	//lint:ignore SA1019 the deprecated Seed is the only way to seed the source the library draws from
	mathrand.Seed(int64(seed ^ 0x676c6f62616c))
}

var godebugOnce sync.Once

// Run runs sc; it must be called inside a synctest bubble (RunTest).
func Run(sc Scenario) (Result, error) {
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	if err := checkScenario(sc); err != nil {
		return Result{}, err
	}
	etcd := sc.Lock.NewEtcd != nil
	if etcd {
		etcdRuns.Lock()
		defer etcdRuns.Unlock()
	}
	cfg := sc.Config.Under(sc.Plan)
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.Nodes > 64 || cfg.Hosts > 64 {
		return Result{}, errors.New("realredis: at most 64 nodes and 64 hosts")
	}
	seedGlobalRand(sc.Seed)
	w := newWorld(sc, cfg)
	defer w.cancel()
	w.scheduleFaults()
	w.push(&event{at: w.end, kind: evEnd})
	if etcd {
		w.push(&event{at: int64(etcdnode.ExpiryCheckPeriod), kind: evExpiry})
		w.served = make([][]int64, len(w.clients))
	}
	for _, c := range w.clients {
		go c.run(w.ctx)
	}
	w.loop()
	for _, c := range w.clients {
		c.finish()
	}
	if etcd {
		w.markLeaseLapses()
	}
	return w.result(sc)
}

// checkScenario refuses what Run cannot run: outside a bubble, a lock
// with no constructor or two, an etcd lock over more than one member.
func checkScenario(sc Scenario) error {
	if !inBubble() {
		return errors.New("realredis: Run must run inside a testing/synctest bubble: call RunTest (or locksimtest.CheckRedis) from a test")
	}
	if (sc.Lock.New == nil) == (sc.Lock.NewEtcd == nil) {
		return fmt.Errorf("realredis: lock %q needs one constructor, New (Redis) or NewEtcd", sc.Lock.Name)
	}
	if err := sc.Lock.Retry.Validate(); err != nil {
		return fmt.Errorf("realredis: lock %q: %v", sc.Lock.Name, err)
	}
	if sc.Lock.NewEtcd != nil && sc.Config.Nodes != 1 {
		return fmt.Errorf("realredis: an etcd lock runs against one member: the world has %d nodes (EtcdDefaultConfig has one)", sc.Config.Nodes)
	}
	return nil
}

// newWorld is sc's world in cfg before it starts: its nodes (Redis nodes
// or the etcd member) with their clocks, its clients with their timed
// pauses, and what the history says of the world.
func newWorld(sc Scenario, cfg sim.Config) *world {
	plan := Fit(sc.Plan)
	w := &world{cfg: cfg, plan: plan, lock: sc.Lock, seed: sc.Seed, epoch: time.Now(), end: int64(cfg.Duration),
		wake: make(chan struct{}, 1), hash: fnv.New64a(), tracing: sc.Trace,
		net: rand.New(rand.NewPCG(sc.Seed, 0x6e6574))}
	w.quarantine = sc.Lock.Envelope.Quarantined() && !plan.Deployment.NoQuarantine
	w.fenced = sc.Lock.Envelope.Fenced() && !plan.Deployment.NoFencing
	w.hist.Fenced = w.fenced
	w.ctx, w.cancel = context.WithCancel(context.Background())
	for range cfg.Nodes {
		if sc.Lock.NewEtcd != nil {
			w.nodes = append(w.nodes, &node{member: etcdnode.New(etcdnode.Options{})})
			w.estreams = map[uint64]*estream{}
			continue
		}
		w.nodes = append(w.nodes, &node{store: redisnode.New()})
	}
	for _, c := range plan.Clocks {
		n := w.nodes[c.Index]
		n.offset, n.driftPPM = int64(c.Offset), c.DriftPPM
	}
	for h := range cfg.Hosts {
		for t := range cfg.ThreadsPerHost {
			i := len(w.clients)
			w.clients = append(w.clients, &client{w: w, idx: i, host: h, name: fmt.Sprintf("h%d/t%d", h, t),
				rnd: rand.New(rand.NewPCG(sc.Seed, 0x636c69<<8|uint64(i))),
				use: rand.New(rand.NewPCG(sc.Seed, 0x757365<<8|uint64(i)))})
			w.hist.Clients = append(w.hist.Clients, model.Client{Name: w.clients[i].name, Host: fmt.Sprintf("h%d", h)})
		}
	}
	for _, e := range plan.Events {
		if e.Kind == faults.Pause && e.Point == "" && e.Client < len(w.clients) {
			c := w.clients[e.Client]
			c.pauses = append(c.pauses, [2]int64{int64(e.At), int64(e.At + e.For)})
		}
	}
	w.hist.TTL, w.hist.Think, w.hist.End, w.hist.Replicas = cfg.TTL, cfg.ThinkMax, w.end, cfg.Nodes
	return w
}

// result is the ended run's history and hash, or why the run says
// nothing (an order it could not decide, a lock that never reached the
// simulated nodes).
func (w *world) result(sc Scenario) (Result, error) {
	w.hist.Events = w.merge()
	w.hist.Abort = w.abort
	slices.SortStableFunc(w.hist.Pauses, func(a, b model.PointPause) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Client, b.Client))
	})
	slices.SortStableFunc(w.hist.Extends, func(a, b model.Extend) int { // recorded by the clients' goroutines
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Client, b.Client))
	})
	if err := w.getErr(); err != nil && !errors.Is(err, errAbort) {
		return Result{}, err
	}
	if w.requests == 0 && w.abort == nil {
		for _, e := range w.hist.Events {
			if e.Kind == model.AcquireReturn {
				return Result{}, fmt.Errorf("realredis: lock %q sent no request to the simulated nodes in a run where its clients acquired: build it on RedisClient.Nodes (a client of its own dials the real network, which locksim does not serve)", sc.Lock.Name)
			}
		}
	}
	un := w.unsupported()
	for _, e := range w.hist.Events {
		w.scratch = fmt.Appendf(w.scratch[:0], "%d %d %d %v %d %d %d %s", e.Time, e.Client, e.Kind, e.Granted, e.ValidUntilTrue, e.Value, e.Sent, e.Reason)
		w.hash.Write(w.scratch)
	}
	w.hist.Unsupported = un
	return Result{Result: sim.Result{History: w.hist, TraceHash: w.hash.Sum64(), Events: w.events, Trace: w.trace}, Unsupported: un, Requests: w.requests}, nil
}

// unsupported is what the lock asked of the nodes that they do not
// serve, sorted, each once.
func (w *world) unsupported() []string {
	var un []string
	for _, n := range w.nodes {
		if n.member != nil {
			un = append(un, n.member.Unsupported()...)
			continue
		}
		un = append(un, n.store.Unsupported()...)
	}
	slices.Sort(un)
	return slices.Compact(un)
}

// merge puts the clients' events in one history: by time, then client,
// then each client's own order; sequence numbers follow.
func (w *world) merge() []model.Event {
	var all []model.Event
	for _, c := range w.clients {
		all = append(all, c.events...)
	}
	slices.SortStableFunc(all, func(a, b model.Event) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Client, b.Client))
	})
	for i := range all {
		all[i].Seq = uint64(i + 1)
	}
	return all
}

func (w *world) getErr() error {
	w.imu.Lock()
	defer w.imu.Unlock()
	return w.err
}

func (w *world) setErr(err error) {
	w.imu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.imu.Unlock()
}

// sortedLines sorts the lines of s (and redsync's "; "-joined parts).
func sortedLines(s string) string {
	if !strings.ContainsAny(s, "\n;") {
		return s
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ';' })
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// InBubble reports whether the caller runs inside a testing/synctest
// bubble (RunTest cannot make one there: bubbles do not nest).
func InBubble() bool { return inBubble() }

// inBubble: Wait panics outside a bubble.
func inBubble() (in bool) {
	defer func() {
		if recover() != nil {
			in = false
		}
	}()
	synctest.Wait()
	return true
}

// CheckDeterminism runs sc twice in bubbles of t with tracing on and
// returns a *sim.DeterminismError naming the first event where the runs
// differ, if they do: the coordinator's trace first, then the histories.
func CheckDeterminism(t *testing.T, sc Scenario) (uint64, error) {
	sc.Trace = true
	a, err := RunTest(t, sc)
	if err != nil {
		return 0, err
	}
	b, err := RunTest(t, sc)
	if err != nil {
		return 0, err
	}
	if a.TraceHash == b.TraceHash {
		return a.TraceHash, nil
	}
	lines := func(r Result) []string {
		var out []string
		for _, e := range r.Trace {
			out = append(out, model.Seconds(e.Time)+" "+e.What)
		}
		for _, e := range r.History.Events {
			out = append(out, fmt.Sprintf("%s history: %s %s granted=%v value=%d %s", model.Seconds(e.Time), r.History.Clients[e.Client].Name, e.Kind, e.Granted, e.Value, e.Reason))
		}
		return out
	}
	i, x, y := sim.FirstDifference(lines(a), lines(b))
	return 0, &sim.DeterminismError{HashA: a.TraceHash, HashB: b.TraceHash, Index: i, LineA: x, LineB: y}
}
