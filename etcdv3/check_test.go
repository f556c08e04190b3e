package etcdv3

import (
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/realredis"
)

// mutexLock is etcd's Mutex as NewMutexLocker wires it, with no envelope.
func mutexLock() realredis.Lock {
	return Lock("etcd-concurrency-mutex", func(c *Client) realredisLocker { return NewMutexLocker(c, "/locksim-lock") })
}

type realredisLocker = realredis.Locker

// Without faults, etcd's Mutex over the simulator is a lock: clients take
// turns, the counter counts, and every seed replays to the same hash.
func TestMutexWithoutFaults(t *testing.T) {
	cfg := realredis.EtcdDefaultConfig()
	for seed := uint64(1); seed <= 5; seed++ {
		res, err := realredis.RunTest(t, realredis.Scenario{Config: cfg, Lock: mutexLock(), Seed: seed, Plan: faults.Plan{}})
		if err != nil {
			t.Fatal(err)
		}
		v := model.Check(res.History, model.DefaultCheckOptions())
		grants := 0
		for _, e := range res.History.Events {
			if e.Kind == model.AcquireReturn && e.Granted {
				grants++
			}
		}
		if len(v.Violations) > 0 || grants < 10 || res.History.Abort != nil {
			t.Fatalf("seed %d: %d grants, abort %+v, violations %+v", seed, grants, res.History.Abort, v.Violations)
		}
		t.Logf("seed %d: %d grants, %d events, hash %x", seed, grants, res.Events, res.TraceHash)
		if _, err := realredis.CheckDeterminism(t, realredis.Scenario{Config: cfg, Lock: mutexLock(), Seed: seed}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
