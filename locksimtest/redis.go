package locksimtest

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/realredis"
)

// Locker is your lock as the workload drives it: Lock (with the instant
// its validity ends, or zero), Unlock, and, if it has one, Extend
// (realredis.Extender).
type Locker = realredis.Locker

// Fencer is a Locker whose holds carry a fencing token (FencingToken).
// Give the lock an envelope whose Safety has ResourceChecksTokens, and
// the workload's resource refuses an access with a token below the newest
// it has let in: the check then holds the lock to resource safety, not
// mutual exclusion (realredis.Fencer).
type Fencer = realredis.Fencer

// RedisClient is what your constructor gets for one simulated client
// thread: a go-redis client per simulated Redis node, the TTL to wire the
// lock with, and a seeded random stream to feed the library's random
// choices (lock values, retry delays), so that runs replay.
type RedisClient = realredis.Client

// DefaultRedisSeeds is how many seeds CheckRedis sweeps without Seeds.
const DefaultRedisSeeds = 300

// Name names the lock in reports and repro files (CheckRedis; "redis-lock"
// by default).
func Name(name string) Option { return func(s *settings) { s.name = name } }

// Envelope is what the lock promises and assumes of the world (CheckRedis:
// by default RedlockEnvelope over three nodes or more, OneNodeEnvelope
// over fewer; Envelope(algorithm.Envelope{}) promises everything and
// assumes nothing).
func Envelope(e algorithm.Envelope) Option { return func(s *settings) { s.envelope = &e } }

// RedisOptions adjusts the go-redis options of every client locksim makes
// (timeouts, pool size, retries) to match your deployment. locksim sets
// the dialer and switches go-redis's retry backoff jitter off afterwards
// (it draws from the global math/rand).
func RedisOptions(f func(*redis.Options)) Option { return func(s *settings) { s.redisOptions = f } }

// RetryPromise is what a Lock promises about trying again (Retries).
type RetryPromise = realredis.Retry

// Retries states what your Lock promises about trying again before it
// reports failure: it keeps trying for at least forAtLeast after it is
// called (or until its caller's deadline), never waiting longer than gap
// between two tries (its retry delay plus the time a failed try takes).
// A Lock that then returns failure sooner, while the lock stays free long
// enough that a try would have got it, is a gave-up-while-free finding;
// a client that stays inside its Lock while the lock is free, nothing in
// the way, for longer than gap and three round trips with no one taking
// it is a starved-while-free finding (per-client starvation against the
// promise, and its failover bound; realredis.Retry). Without it, Lock
// promises one try and is not judged so.
func Retries(forAtLeast, gap time.Duration) Option {
	return func(s *settings) {
		r := realredis.Retry{For: forAtLeast, Gap: gap}
		if err := r.Validate(); err != nil {
			s.err = fmt.Errorf("locksimtest.Retries: %v", err)
		}
		s.retry = &r
	}
}

// CheckRedis breaks a lock built on real Redis clients: your own wiring of
// redsync, redislock or plain go-redis, unmodified, against simulated Redis
// nodes (realredis.DefaultConfig: three of them) under faults. newLock
// builds one client thread's lock from its clients:
//
//	func TestMyRedisLock(t *testing.T) {
//		locksimtest.CheckRedis(t, func(c *locksimtest.RedisClient) locksimtest.Locker {
//			return newMyLock(c.Nodes, c.TTL, c.Rand)
//		}, locksimtest.Envelope(myEnvelope), locksimtest.Seeds(500))
//	}
//
// Each seed runs in a testing/synctest bubble: the library's goroutines,
// timers and contexts run on the bubble's clock, and locksim's coordinator
// orders every request, so a seed replays to the same trace hash. The
// report, repro file and replay lines are Check's. What this mode does not
// draw (host clocks, topology changes, duplication) is realredis.Fit's.
// Seeds draw their fault plans, not their worlds: the world is Config's
// (realredis.DefaultConfig by default) for every seed.
func CheckRedis(t *testing.T, newLock func(c *RedisClient) Locker, opts ...Option) {
	t.Helper()
	if newLock == nil {
		t.Fatal("locksimtest.CheckRedis: the lock's constructor is nil")
	}
	CheckLock(t, realredis.Lock{Name: "redis-lock", Summary: "a lock over real go-redis clients", New: newLock}, opts...)
}

// CheckLock is CheckRedis for a lock given whole: on Redis (lock.New) or
// on etcd's own client over one simulated member (lock.NewEtcd; the
// etcdv3 module's Check wires etcd's client for you). Options override
// the lock's name and envelope; the world is realredis.DefaultConfig, or
// EtcdDefaultConfig for etcd, unless Config says otherwise.
func CheckLock(t *testing.T, lock realredis.Lock, opts ...Option) {
	t.Helper()
	s := settings{classes: "all", seeds: DefaultRedisSeeds, name: lock.Name}
	for _, o := range opts {
		o(&s)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if realredis.InBubble() {
		t.Fatal("locksimtest: called inside a synctest bubble; it makes a bubble per seed and bubbles do not nest: call it from the test itself")
	}
	classes, err := classesOf(s)
	if err != nil {
		t.Fatal(err)
	}
	lock.Name = s.name
	if s.redisOptions != nil {
		lock.Options = s.redisOptions
	}
	if s.envelope != nil {
		lock.Envelope = *s.envelope
	}
	if s.retry != nil {
		lock.Retry = *s.retry
	}
	cfg := realredis.DefaultConfig()
	if lock.NewEtcd != nil {
		cfg = realredis.EtcdDefaultConfig()
	}
	if s.config != nil {
		cfg = *s.config
	}
	if s.envelope == nil && lock.Envelope == (algorithm.Envelope{}) && lock.NewEtcd == nil {
		// A lock that states no envelope gets the one its world calls for,
		// so that seeds draw inside it and a breach is an expected cost,
		// not a bug (Envelope(algorithm.Envelope{}) assumes nothing).
		lock.Envelope = defaultEnvelope(cfg)
	}
	target := explore.Target{Variant: lock.Variant(), Config: cfg, Classes: classes,
		Runner: realredis.Runner{T: t, Lock: lock}}
	if err := target.Validate(); err != nil {
		t.Fatalf("locksimtest: %v", err)
	}
	if *determinismFlag > 0 {
		checkDeterminism(t, target, lock, *determinismFlag)
		return
	}
	var iso *explore.Isolation
	if !s.inProcess {
		iso = &s.iso
		iso.Command = explore.TestWorkerCommand(t.Name())
	}
	checkTarget(t, target, s, iso)
}

var determinismFlag = flag.Int("locksim.determinism", 0, "CheckRedis runs its first N seeds twice each, with traces, and fails naming the first event where two runs of a seed differ (a library's own nondeterminism), instead of sweeping")

// checkDeterminism runs seeds 1..n twice each in this process.
func checkDeterminism(t *testing.T, target explore.Target, lock realredis.Lock, n int) {
	t.Helper()
	for seed := uint64(1); seed <= uint64(n); seed++ {
		at := target.At(seed)
		sc := realredis.Scenario{Config: at.Config, Lock: lock, Seed: seed, Plan: target.PlanFor(seed)}
		if _, err := realredis.CheckDeterminism(t, sc); err != nil {
			t.Fatalf("locksim: %s: seed %d does not replay: %v\n(a library's own randomness, a select between two ready channels or a map's order: feed its random choices from RedisClient.Rand)", lock.Name, seed, err)
		}
	}
	t.Logf("locksim: %s: %d seeds, each the same run twice", lock.Name, n)
}
