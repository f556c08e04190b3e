package redislocks

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/realredis"
	"github.com/locksim/locksim/sim/redisnode"
)

// cpuNow is the process's user+system CPU time: the machine is shared,
// and wall time would count the other tenants.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchWorld is the issue's: redsync over 5 masters, 3 clients, a
// 5-minute world.
func benchWorld() sim.Config {
	c := realredis.DefaultConfig()
	c.Nodes, c.Replication, c.Hosts, c.ThreadsPerHost = 5, 5, 3, 1
	c.Duration = 5 * time.Minute
	return c
}

// BenchmarkRedsyncCoordinated is locksim's deterministic mode: redsync
// over 5 masters, under all fault classes (each seed its own plan), or
// none (the pair of the baseline below).
func BenchmarkRedsyncCoordinated(b *testing.B) {
	for _, bc := range []struct {
		classes string
		retry   realredis.Retry // a stated promise: the coordinator watches each Lock call (gaveup.go)
	}{{"none", realredis.Retry{}}, {"all", realredis.Retry{}}, {"none", redsyncPromise}, {"all", redsyncPromise}} {
		classes, name := bc.classes, "faults="+bc.classes
		if bc.retry.Gap > 0 {
			name += "/promise"
		}
		b.Run(name, func(b *testing.B) {
			cs, err := faults.ParseClasses(classes)
			if err != nil {
				b.Fatal(err)
			}
			cfg := benchWorld()
			shape := sim.ShapeOf(cfg)
			lock := realredis.Lock{Name: "redsync", New: Redsync, Envelope: redlockEnvelope(), Retry: bc.retry}
			var requests int64
			start := cpuNow()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seed := uint64(i + 1)
				plan := realredis.Fit(faults.SwarmWithin(seed, cs, shape, faults.Bounds{}))
				var res realredis.Result
				var rerr error
				runInBubble(b, func() { res, rerr = realredis.Run(realredis.Scenario{Config: cfg, Lock: lock, Seed: seed, Plan: plan}) })
				if rerr != nil {
					b.Fatal(rerr)
				}
				requests += res.Requests
			}
			cpu := cpuNow() - start
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "seeds/cpu-s")
			b.ReportMetric(float64(requests)/float64(b.N), "requests/seed")
			b.ReportMetric(float64(requests)/cpu.Seconds(), "requests/cpu-s")
		})
	}
}

// BenchmarkRedsyncPlainSynctest is the baseline the coordination is
// measured against: the same library and workload in a plain synctest
// bubble, against an in-memory fake (a goroutine per connection answering
// from a redisnode after the same latency), with no coordinator and no
// faults: nondeterministic, and what it costs to run the library at all.
func BenchmarkRedsyncPlainSynctest(b *testing.B) {
	cfg := benchWorld()
	var requests int64
	start := cpuNow()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runInBubble(b, func() { requests += plainRun(cfg, uint64(i+1)) })
	}
	cpu := cpuNow() - start
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "seeds/cpu-s")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/seed")
	b.ReportMetric(float64(requests)/cpu.Seconds(), "requests/cpu-s")
}

// runInBubble runs f in a synctest bubble from a benchmark (synctest.Test
// takes a *testing.T: a benchmark runs one as a sub-test would).
func runInBubble(b *testing.B, f func()) {
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{Name: "bubble", F: func(t *testing.T) { synctest.Test(t, func(*testing.T) { f() }) }}})
	if !ok {
		b.Fatal("the bubble failed")
	}
}

// plainRun is the baseline's run: the workload's shape (lock, hold,
// unlock, think) over redsync and the fake, until cfg.Duration.
func plainRun(cfg sim.Config, seed uint64) int64 {
	fake := &fakeRedis{nodes: make([]*redisnode.Node, cfg.Nodes), latency: (cfg.LatencyMin + cfg.LatencyMax) / 2, epoch: time.Now()}
	for i := range fake.nodes {
		fake.nodes[i] = redisnode.New()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	for c := range cfg.Hosts * cfg.ThreadsPerHost {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clients := make([]redis.UniversalClient, cfg.Nodes)
			for i := range clients {
				clients[i] = redis.NewClient(&redis.Options{Addr: "10.0.0.1:6379", PoolSize: 256, MinRetryBackoff: -1, MaxRetryBackoff: -1,
					ReadTimeout: cfg.RPCTimeout, WriteTimeout: cfg.RPCTimeout,
					MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
					Dialer:                   func(context.Context, string, string) (net.Conn, error) { return fake.dial(i), nil }})
			}
			defer func() {
				for _, cl := range clients {
					cl.Close()
				}
			}()
			rc := &locksimtest.RedisClient{Name: "h" + string(rune('0'+c)) + "/t0", Index: c, Nodes: clients, TTL: cfg.TTL}
			rc.Rand = newRand(seed, c)
			l := Redsync(rc)
			for ctx.Err() == nil {
				if _, err := l.Lock(ctx); err == nil {
					sleep(ctx, cfg.HoldMin+time.Duration(rc.Rand.Int64N(int64(cfg.HoldMax-cfg.HoldMin))))
					l.Unlock(ctx)
				}
				sleep(ctx, cfg.ThinkMin+time.Duration(rc.Rand.Int64N(int64(cfg.ThinkMax-cfg.ThinkMin))))
			}
		}()
	}
	wg.Wait()
	fake.wg.Wait()
	return fake.requests
}

func newRand(seed uint64, c int) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(c))) }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// fakeRedis serves redisnodes over net.Pipe, a reader goroutine per
// connection, applying each command after a fixed latency.
type fakeRedis struct {
	mu       sync.Mutex
	nodes    []*redisnode.Node
	latency  time.Duration
	epoch    time.Time
	requests int64
	wg       sync.WaitGroup
}

func (f *fakeRedis) dial(node int) net.Conn {
	cli, srv := net.Pipe()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer srv.Close()
		var buf []byte
		chunk := make([]byte, 4096)
		for {
			n, err := srv.Read(chunk)
			if err != nil {
				return
			}
			buf = append(buf, chunk[:n]...)
			for {
				args, used, err := redisnode.ParseCommand(buf)
				if err != nil || used == 0 {
					break
				}
				buf = buf[used:]
				time.Sleep(f.latency)
				f.mu.Lock()
				f.requests++
				r := f.nodes[node].Do(int64(time.Since(f.epoch))+946_684_800*int64(time.Second), args)
				f.mu.Unlock()
				time.Sleep(f.latency)
				if _, err := srv.Write(r.AppendRESP2(nil)); err != nil {
					return
				}
			}
		}
	}()
	return cli
}
