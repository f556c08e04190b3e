package redislocks

import (
	"flag"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/realredis"
)

var long = flag.Bool("long", false, "sweep tens of thousands of seeds per lock (the verdicts in reports/VARIANTS.md)")

func redlockEnvelope() algorithm.Envelope { return locksimtest.RedlockEnvelope() }

// oneNodeEnvelope is Redlock's for a lock on one node: the same safety
// assumptions, and for liveness no fewest masters (one is all it has).
func oneNodeEnvelope() algorithm.Envelope { return locksimtest.OneNodeEnvelope() }

// The naive lock fails: two holders, found by the default sweep, with a
// seed that replays to the same hash and shrinks.
func TestNaiveLockHasTwoHolders(t *testing.T) {
	lock := realredis.Lock{Name: "naive-go-redis", New: Naive}
	target := explore.Target{Variant: lock.Variant(), Config: realredis.DefaultConfig(),
		Classes: []faults.Class{faults.ClassAll}, Runner: realredis.Runner{T: t, Lock: lock}}
	res, err := explore.Sweep(target, explore.SweepOptions{From: 1, Count: 200})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed == 0 {
		t.Fatalf("the naive lock passed 200 seeds: %+v", res)
	}
	f := res.Failures[0]
	if _, ok := f.Verdict.First(model.MutualExclusion); !ok {
		t.Fatalf("the naive lock's first failure is not two holders: %s", f)
	}
	again, err := explore.RunPlan(target, f.Seed, f.Plan, explore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash != f.Hash {
		t.Fatalf("seed %d replays to %016x, swept as %016x", f.Seed, again.Hash, f.Hash)
	}
	m, err := explore.Minimize(target, f.Seed, f.Plan, model.MutualExclusion, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %s\nminimised from %d to %d faults in %d runs:\n%s", f.Seed, f.Verdict, m.SizeBefore, m.SizeAfter, m.Runs, m.Outcome)
}

// redsyncRetries is what redsync's Lock promises as wired here: 32 tries,
// 50 to 250 ms apart (31 waits of at least 50 ms), and in a world with
// nothing in the way a failed try takes round trips, not its timeout.
func redsyncRetries() locksimtest.Option {
	return locksimtest.Retries(redsyncPromise.For, redsyncPromise.Gap)
}

var (
	redsyncPromise = realredis.Retry{For: 1500 * time.Millisecond, Gap: 250 * time.Millisecond}
	// redislock's Lock (locks.go) obtains every 100 ms until its caller's
	// deadline: for the whole run, at most a try and 100 ms apart.
	redislockPromise = realredis.Retry{For: 2 * time.Minute, Gap: 150 * time.Millisecond}
)

// redsync over three masters, inside Redlock's envelope.
func TestRedsyncThreeMasters(t *testing.T) {
	locksimtest.CheckRedis(t, Redsync, locksimtest.Name("redsync-3"), locksimtest.Envelope(redlockEnvelope()), redsyncRetries(), seeds(200))
}

// redsync over five masters.
func TestRedsyncFiveMasters(t *testing.T) {
	c := realredis.DefaultConfig()
	c.Nodes, c.Replication = 5, 5
	locksimtest.CheckRedis(t, Redsync, locksimtest.Name("redsync-5"), locksimtest.Envelope(redlockEnvelope()), locksimtest.Config(c), redsyncRetries(), seeds(200))
}

// bsm/redislock over one node.
func TestRedislockOneNode(t *testing.T) {
	c := realredis.DefaultConfig()
	c.Nodes, c.Replication = 1, 1
	locksimtest.CheckRedis(t, Redislock, locksimtest.Name("redislock"), locksimtest.Envelope(oneNodeEnvelope()), locksimtest.Config(c),
		locksimtest.Retries(redislockPromise.For, redislockPromise.Gap), seeds(200))
}

func seeds(n int) locksimtest.Option {
	if *long {
		n = 20_000
	}
	return locksimtest.Seeds(n)
}
