package etcdv3

import (
	"flag"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/realredis"
)

var sweepSeeds = flag.Int("sweep", 0, "TestMutexSweep sweeps this many seeds of every fault class (0: skip)")

// A long sweep of etcd's Mutex within MutexEnvelope, in this process:
// -sweep 10000 backs what VARIANTS.md says of it. The fixed Mutex (3.5
// and later) has no bug in it; 3.4's has (fixedMutex false), and the
// sweep counts them.
func TestMutexSweep(t *testing.T) {
	if *sweepSeeds == 0 {
		t.Skip("-sweep N runs it")
	}
	lock := mutexLock()
	lock.Envelope = MutexEnvelope()
	target := explore.Target{Variant: lock.Variant(), Config: realredis.EtcdDefaultConfig(), Classes: []faults.Class{faults.ClassAll},
		Runner: realredis.Runner{T: t, Lock: lock}}
	var first []explore.Outcome
	res, err := explore.Sweep(target, explore.SweepOptions{From: 1, Count: *sweepSeeds, KeepGoing: true, OnOutcome: func(o explore.Outcome) {
		if o.Bugs() > 0 && len(first) < 3 {
			first = append(first, o)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	bugs := res.Failed - res.LivenessFailed
	t.Logf("%d seeds: %d with a bug (%d liveness only), %d events", res.Runs, res.Failed, res.LivenessFailed, res.Events)
	for _, o := range first {
		t.Logf("%s", o)
	}
	switch {
	case fixedMutex && res.Failed > 0:
		t.Fatalf("etcd's fixed Mutex failed %d of %d seeds inside MutexEnvelope", res.Failed, res.Runs)
	case !fixedMutex && bugs == 0:
		t.Fatalf("3.4's Mutex had no safety bug in %d seeds", res.Runs)
	}
}
