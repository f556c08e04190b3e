package realredis

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	redigo "github.com/gomodule/redigo/redis"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// naive is the lock people write first: SET NX PX, then DEL without
// checking that the lock is still theirs.
type naive struct {
	c     *Client
	tries int
}

func (l *naive) Lock(ctx context.Context) (time.Time, error) {
	for {
		l.tries++
		start := time.Now()
		ok, err := l.c.Nodes[0].SetNX(ctx, "lock", fmt.Sprintf("%s#%d", l.c.Name, l.tries), l.c.TTL).Result()
		if err == nil && ok {
			return start.Add(l.c.TTL), nil
		}
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (l *naive) Unlock(ctx context.Context) error { return l.c.Nodes[0].Del(ctx, "lock").Err() }

var naiveLock = Lock{Name: "naive-go-redis", New: func(c *Client) Locker { return &naive{c: c} }}

func run(t *testing.T, sc Scenario) Result {
	t.Helper()
	res, err := RunTest(t, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestNaiveLockRunsFaultFree(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication = 1, 1
	cfg.Duration = 30 * time.Second
	res := run(t, Scenario{Config: cfg, Lock: naiveLock, Seed: 1})
	v := model.Check(res.History, model.DefaultCheckOptions())
	grants := 0
	for _, e := range res.History.Events {
		if e.Kind == model.AcquireReturn && e.Granted {
			grants++
		}
	}
	if grants < 5 {
		t.Fatalf("only %d grants in 30 s fault-free; verdict %s", grants, v)
	}
	if !v.OK() {
		t.Fatalf("fault-free naive lock: %s", v)
	}
	writes := 0
	for _, e := range res.History.Events {
		if e.Kind == model.ResourceWrite {
			writes++
		}
	}
	if res.History.FinalValue != int64(writes) || writes < grants-1 {
		t.Errorf("counter %d after %d writes in %d grants", res.History.FinalValue, writes, grants)
	}
}

func TestSameSeedSameHash(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication = 1, 1
	cfg.Duration = 30 * time.Second
	plan := faults.Plan{Network: faults.Network{LossPPM: 50_000}}
	var first uint64
	for i := range 10 {
		res := run(t, Scenario{Config: cfg, Lock: naiveLock, Seed: 7, Plan: plan})
		if i == 0 {
			first = res.TraceHash
		} else if res.TraceHash != first {
			t.Fatalf("run %d: hash %016x, first %016x", i, res.TraceHash, first)
		}
	}
}

func TestConstructorPanicIsAFinding(t *testing.T) {
	l := Lock{Name: "panics", New: func(*Client) Locker { panic("no lock for you") }}
	cfg := DefaultConfig()
	cfg.Duration = 5 * time.Second
	res := run(t, Scenario{Config: cfg, Lock: l, Seed: 1})
	if res.History.Abort == nil || res.History.Abort.Kind != model.Panic {
		t.Fatalf("abort %+v, want a panic", res.History.Abort)
	}
}

func TestRunOutsideABubbleIsAnError(t *testing.T) {
	_, err := Run(Scenario{Config: DefaultConfig(), Lock: naiveLock, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "synctest bubble") {
		t.Fatalf("err = %v, want one saying Run needs a bubble", err)
	}
}

// ownClient is a lock that ignores the clients it is given.
type ownClient struct{}

func (ownClient) Lock(ctx context.Context) (time.Time, error) { return time.Time{}, nil }
func (ownClient) Unlock(ctx context.Context) error            { return nil }

func TestALockThatSendsNothingIsAnError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 5 * time.Second
	_, err := RunTest(t, Scenario{Config: cfg, Lock: Lock{Name: "own", New: func(*Client) Locker { return ownClient{} }}, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "RedisClient.Nodes") {
		t.Fatalf("err = %v, want one saying the lock sent nothing to locksim's nodes", err)
	}
}

// oddLock uses a command locksim does not simulate.
type oddLock struct{ naive }

func (l *oddLock) Unlock(ctx context.Context) error {
	l.c.Nodes[0].Do(ctx, "OBJECT", "ENCODING", "lock")
	return l.naive.Unlock(ctx)
}

func TestAnUnsupportedCommandIsNamedInTheVerdict(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Duration = 1, 1, 10*time.Second
	l := Lock{Name: "odd", New: func(c *Client) Locker { return &oddLock{naive{c: c}} }}
	res := run(t, Scenario{Config: cfg, Lock: l, Seed: 1})
	v := model.Check(res.History, model.DefaultCheckOptions())
	if !strings.Contains(v.String(), "does not simulate") || !strings.Contains(v.String(), "object") && !strings.Contains(v.String(), "OBJECT") {
		t.Fatalf("verdict does not name the command: %s (unsupported %v)", v, res.Unsupported)
	}
}

// The same seed gives the same trace hash under every fault class, and a
// run that differs is named by its first divergent event.
func TestDeterministicUnderFaults(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 40 * time.Second
	shape := faults.Shape{Nodes: cfg.Nodes, Replication: cfg.Replication, Hosts: cfg.Hosts, Clients: cfg.Hosts * cfg.ThreadsPerHost, Duration: cfg.Duration, TTL: cfg.TTL}
	n := 100
	if testing.Short() {
		n = 20
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		plan := Fit(faults.Swarm(seed, []faults.Class{faults.ClassAll}, shape))
		if _, err := CheckDeterminism(t, Scenario{Config: cfg, Lock: naiveLock, Seed: seed, Plan: plan}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// unseeded draws its lock values from the global math/rand, as a library
// that ignores the seeded stream would.
type unseeded struct{ naive }

func (l *unseeded) Lock(ctx context.Context) (time.Time, error) {
	for {
		ok, err := l.c.Nodes[0].SetNX(ctx, "lock", strconv.Itoa(mathrand.Int()), l.c.TTL).Result()
		if err == nil && ok {
			return time.Now().Add(l.c.TTL), nil
		}
		select {
		case <-time.After(time.Duration(50+mathrand.IntN(100)) * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func TestCheckDeterminismNamesTheFirstDivergentEvent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Duration = 1, 1, 10*time.Second
	l := Lock{Name: "unseeded", New: func(c *Client) Locker { return &unseeded{naive{c: c}} }}
	_, err := CheckDeterminism(t, Scenario{Config: cfg, Lock: l, Seed: 1})
	var de *sim.DeterminismError
	if !errors.As(err, &de) || de.Index < 0 || !strings.Contains(de.LineA, "SET") && !strings.Contains(de.LineA, "set") {
		t.Fatalf("err = %v, want a DeterminismError naming a SET", err)
	}
	t.Log(err)
}

func TestRunTestInsideABubbleIsAnError(t *testing.T) {
	var err error
	synctest.Test(t, func(t *testing.T) { _, err = RunTest(t, Scenario{Config: DefaultConfig(), Lock: naiveLock, Seed: 1}) })
	if err == nil || !strings.Contains(err.Error(), "do not nest") {
		t.Fatalf("err = %v, want one saying bubbles do not nest", err)
	}
}

// deaf retries for ever, deaf to its context.
type deaf struct{ naive }

func (l *deaf) Lock(ctx context.Context) (time.Time, error) {
	for {
		if ok, err := l.c.Nodes[0].SetNX(context.Background(), "lock", l.c.Name, l.c.TTL).Result(); err == nil && ok {
			return time.Now().Add(l.c.TTL), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestALockDeafToItsContextIsALivelockFinding(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Duration = 1, 1, 10*time.Second
	res, err := RunTest(t, Scenario{Config: cfg, Lock: Lock{Name: "deaf", New: func(c *Client) Locker { return &deaf{naive{c: c}} }}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.History.Abort; a == nil || a.Kind != model.Livelock || !strings.Contains(a.Detail, "ignores the context") {
		t.Fatalf("abort %+v, want a livelock naming the context", res.History.Abort)
	}
}

// naiveRedigo is the naive lock over redigo.
type naiveRedigo struct{ naive }

func (l *naiveRedigo) Lock(ctx context.Context) (time.Time, error) {
	for {
		l.tries++
		start := time.Now()
		conn, err := l.c.Redigo[0].GetContext(ctx)
		if err == nil {
			r, err := redigo.String(conn.Do("SET", "lock", fmt.Sprintf("%s#%d", l.c.Name, l.tries), "NX", "PX", l.c.TTL.Milliseconds()))
			conn.Close()
			if err == nil && r == "OK" {
				return start.Add(l.c.TTL), nil
			}
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (l *naiveRedigo) Unlock(ctx context.Context) error {
	conn, err := l.c.Redigo[0].GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Do("DEL", "lock")
	return err
}

func TestARedigoLockRunsAndReplays(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Duration = 1, 1, 30*time.Second
	l := Lock{Name: "naive-redigo", New: func(c *Client) Locker { return &naiveRedigo{naive{c: c}} }}
	plan := faults.Plan{Network: faults.Network{LossPPM: 20_000}}
	h, err := CheckDeterminism(t, Scenario{Config: cfg, Lock: l, Seed: 3, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, Scenario{Config: cfg, Lock: l, Seed: 3, Plan: plan})
	grants := 0
	for _, e := range res.History.Events {
		if e.Kind == model.AcquireReturn && e.Granted {
			grants++
		}
	}
	if grants < 5 || res.TraceHash != h {
		t.Fatalf("%d grants, hash %016x against %016x", grants, res.TraceHash, h)
	}
}

// A traced run hashes as an untraced one: a replay with its trace shown
// says "the same run" of a seed a sweep found.
func TestTracingDoesNotChangeTheHash(t *testing.T) {
	sc := Scenario{Config: DefaultConfig(), Lock: naiveLock, Seed: 9, Plan: faults.Plan{Network: faults.Network{LossPPM: 20_000}}}
	sc.Config.Duration = 30 * time.Second
	plain := run(t, sc)
	sc.Trace = true
	traced := run(t, sc)
	if plain.TraceHash != traced.TraceHash || len(traced.Trace) == 0 {
		t.Fatalf("untraced %016x, traced %016x (%d trace lines)", plain.TraceHash, traced.TraceHash, len(traced.Trace))
	}
}

// twice checks the lock twice at once before each attempt: two identical
// GETs of one client to one node at one instant, on two connections.
type twice struct{ naive }

func (l *twice) Lock(ctx context.Context) (time.Time, error) {
	done := make(chan struct{}, 2)
	for range 2 {
		go func() { l.c.Nodes[0].Get(ctx, "lock"); done <- struct{}{} }()
	}
	<-done
	<-done
	return l.naive.Lock(ctx)
}

// Two identical requests at one instant are ordered by their connections,
// not refused: the run has a verdict, and replays to the same hash.
func TestIdenticalRequestsAtOneInstantAreOrdered(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Duration = 1, 1, 20*time.Second
	lock := Lock{Name: "twice", New: func(c *Client) Locker { return &twice{naive{c: c}} }}
	sc := Scenario{Config: cfg, Lock: lock, Seed: 3, Trace: true}
	res := run(t, sc)
	ties := 0
	for _, e := range res.Trace {
		if strings.HasPrefix(e.What, "tie: ") {
			ties++
		}
	}
	if ties == 0 {
		t.Fatal("the lock's two GETs at one instant were never a tie: the test does not test it")
	}
	if _, err := CheckDeterminism(t, sc); err != nil {
		t.Fatalf("%d ties ordered by connection, and the run does not replay: %v", ties, err)
	}
}
