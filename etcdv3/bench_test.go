package etcdv3

import (
	"context"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/realredis"
)

// cpuNow is the process's user+system CPU time: the machine is shared.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMutexCoordinated is locksim's deterministic mode: etcd's Mutex
// and Session, three clients, one member, a two-minute world, under no
// faults (the pair of the baseline below) or every class (each seed its
// own plan).
func BenchmarkMutexCoordinated(b *testing.B) {
	for _, classes := range []string{"none", "all"} {
		b.Run("faults="+classes, func(b *testing.B) {
			cs, err := faults.ParseClasses(classes)
			if err != nil {
				b.Fatal(err)
			}
			cfg := realredis.EtcdDefaultConfig()
			shape := sim.ShapeOf(cfg)
			lock := mutexLock()
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
			report(b, requests, cpuNow()-start)
		})
	}
}

// BenchmarkMutexPlainSynctest is the baseline the coordination is
// measured against: the same Mutex, Session and workload's shape in a
// plain synctest bubble over the member behind directConn (each call
// applied after the world's mean latency each way, no coordinator, no
// faults): nondeterministic, and what running etcd's client costs at all.
func BenchmarkMutexPlainSynctest(b *testing.B) {
	cfg := realredis.EtcdDefaultConfig()
	var requests int64
	start := cpuNow()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runInBubble(b, func() { requests += plainRun(cfg, uint64(i+1)) })
	}
	report(b, requests, cpuNow()-start)
}

func report(b *testing.B, requests int64, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "seeds/cpu-s")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/seed")
	b.ReportMetric(float64(requests)/cpu.Seconds(), "requests/cpu-s")
}

// runInBubble runs f in a synctest bubble from a benchmark.
func runInBubble(b *testing.B, f func()) {
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{Name: "bubble", F: func(t *testing.T) { synctest.Test(t, func(*testing.T) { f() }) }}})
	if !ok {
		b.Fatal("the bubble failed")
	}
}

// plainRun is the baseline's run: lock, hold, unlock, think, until
// cfg.Duration, for every client.
func plainRun(cfg sim.Config, seed uint64) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration)
	defer cancel()
	d := newDirectMember(ctx)
	d.latency = (cfg.LatencyMin + cfg.LatencyMax) / 2
	var wg sync.WaitGroup
	for c := range cfg.Hosts * cfg.ThreadsPerHost {
		wg.Go(func() {
			cl := NewClient(&directConn{d})
			defer cl.Close()
			rnd := rand.New(rand.NewPCG(seed, uint64(c)))
			s, err := concurrency.NewSession(cl, concurrency.WithTTL(int(cfg.TTL/time.Second)), concurrency.WithContext(ctx))
			if err != nil {
				return
			}
			defer s.Close()
			m := concurrency.NewMutex(s, "/locksim-lock")
			for ctx.Err() == nil {
				if err := m.Lock(ctx); err == nil {
					sleep(ctx, cfg.HoldMin+time.Duration(rnd.Int64N(int64(cfg.HoldMax-cfg.HoldMin))))
					m.Unlock(ctx)
				}
				sleep(ctx, cfg.ThinkMin+time.Duration(rnd.Int64N(int64(cfg.ThinkMax-cfg.ThinkMin)+1)))
			}
		})
	}
	wg.Wait()
	return d.requests.Load()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
