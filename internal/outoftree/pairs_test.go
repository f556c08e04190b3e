package outoftree

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redsyncV40Test wires redsync v4.0.x, unmodified, over locksim's redigo
// pools (v4.0 has no go-redis v9 adapter) and checks it with every
// default of CheckRedis. v4.0 has no Mutex.Until: the wrapper computes the
// validity as redsync's own Lock does, the call's start plus the expiry
// less the drift (1% of it plus 2 ms), for Lock and Extend alike.
const redsyncV40Test = `package rs

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/redigo"

	"github.com/locksim/locksim/locksimtest"
)

type lock struct {
	m   *redsync.Mutex
	ttl time.Duration
}

func newLock(c *locksimtest.RedisClient) locksimtest.Locker {
	pools := make([]redsyncredis.Pool, len(c.Redigo))
	for i, p := range c.Redigo {
		pools[i] = redigo.NewPool(p)
	}
	return lock{redsync.New(pools...).NewMutex("resource-lock",
		redsync.WithExpiry(c.TTL),
		redsync.WithGenValueFunc(func() (string, error) { return fmt.Sprintf("%s-%016x", c.Name, c.Rand.Uint64()), nil }),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return time.Duration(50+c.Rand.IntN(200)) * time.Millisecond })), c.TTL}
}

func (l lock) validity(start time.Time) time.Time {
	return start.Add(l.ttl - l.ttl/100 - 2*time.Millisecond)
}

func (l lock) Lock(ctx context.Context) (time.Time, error) {
	start := time.Now()
	err := l.m.LockContext(ctx)
	return l.validity(start), err
}

func (l lock) Unlock(ctx context.Context) error {
	_, err := l.m.UnlockContext(ctx)
	return err
}

func (l lock) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	ok, err := l.m.ExtendContext(ctx)
	if err == nil && !ok {
		err = errors.New("extend failed")
	}
	return l.validity(start), err
}

func TestLock(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("redsync"))
}
`

// redsyncV1Test wires redsync v1 (github.com/go-redsync/redsync, before
// contexts and Until) over locksim's redigo pools, with every default of
// CheckRedis; the wrapper computes the validity as v1's Lock does.
const redsyncV1Test = `package rs

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-redsync/redsync"

	"github.com/locksim/locksim/locksimtest"
)

type lock struct {
	m   *redsync.Mutex
	ttl time.Duration
}

func newLock(c *locksimtest.RedisClient) locksimtest.Locker {
	pools := make([]redsync.Pool, len(c.Redigo))
	for i, p := range c.Redigo {
		pools[i] = p
	}
	return lock{redsync.New(pools).NewMutex("resource-lock",
		redsync.SetExpiry(c.TTL),
		redsync.SetGenValueFunc(func() (string, error) { return fmt.Sprintf("%s-%016x", c.Name, c.Rand.Uint64()), nil }),
		redsync.SetRetryDelayFunc(func(int) time.Duration { return time.Duration(50+c.Rand.IntN(200)) * time.Millisecond })), c.TTL}
}

func (l lock) validity(start time.Time) time.Time {
	return start.Add(l.ttl - l.ttl/100 - 2*time.Millisecond)
}

func (l lock) Lock(ctx context.Context) (time.Time, error) {
	start := time.Now()
	err := l.m.Lock()
	return l.validity(start), err
}

func (l lock) Unlock(ctx context.Context) error {
	if !l.m.Unlock() {
		return errors.New("unlock failed")
	}
	return nil
}

func (l lock) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	if !l.m.Extend() {
		return time.Time{}, errors.New("extend failed")
	}
	return l.validity(start), nil
}

func TestLock(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("redsync"))
}
`

// goZeroTest wires go-zero's RedisLock, unmodified, over locksim's node:
// go-zero builds its go-redis v8 client from an address, so the test puts
// one of its own (locksim's dialer, go-zero's three retries) into
// go-zero's client cache under a name unique to the client and run; and
// go-zero draws the lock's id from a source seeded with the wall clock at
// start-up, which no run can replay, so the test sets it from the
// client's seeded stream. Extend is Acquire again, go-zero's own idiom
// ("recall Acquire if you own the lock").
const goZeroTest = `package rs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	redv8 "github.com/go-redis/redis/v8"
	redv9 "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/syncx"

	"github.com/locksim/locksim/locksimtest"
)

//go:linkname clientManager github.com/zeromicro/go-zero/core/stores/redis.clientManager
var clientManager *syncx.ResourceManager

var clients atomic.Int64

type lock struct {
	rl  *redis.RedisLock
	v8  *redv8.Client
	ttl time.Duration
	c   *locksimtest.RedisClient
}

func newLock(c *locksimtest.RedisClient) locksimtest.Locker {
	o := c.Nodes[0].(*redv9.Client).Options()
	v8 := redv8.NewClient(&redv8.Options{Addr: o.Addr, Dialer: o.Dialer, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		MaxRetries: 3, PoolSize: 64, IdleTimeout: -1})
	name := fmt.Sprintf("%s#%d", c.Name, clients.Add(1))
	clientManager.GetResource(name, func() (io.Closer, error) { return v8, nil })
	rl := redis.NewRedisLock(redis.New(name), "resource-lock")
	rl.SetExpire(int(c.TTL / time.Second))
	id := reflect.ValueOf(rl).Elem().FieldByName("id")
	reflect.NewAt(id.Type(), unsafe.Pointer(id.UnsafeAddr())).Elem().SetString(fmt.Sprintf("%s-%016x", c.Name, c.Rand.Uint64()))
	return &lock{rl, v8, c.TTL, c}
}

func (l *lock) validity(start time.Time) time.Time {
	return start.Add(l.ttl - l.ttl/100 - 2*time.Millisecond)
}

func (l *lock) Lock(ctx context.Context) (time.Time, error) {
	for {
		start := time.Now()
		if ok, err := l.rl.Acquire(); ok && err == nil {
			return l.validity(start), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(time.Duration(50+l.c.Rand.IntN(200)) * time.Millisecond):
		}
	}
}

func (l *lock) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	ok, err := l.rl.Acquire()
	if err == nil && !ok {
		err = errors.New("not extended")
	}
	return l.validity(start), err
}

func (l *lock) Unlock(ctx context.Context) error {
	ok, err := l.rl.Release()
	if err == nil && !ok {
		err = errors.New("not released")
	}
	return err
}

func (l *lock) Close() error { return l.v8.Close() }

func TestLock(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("go-zero"))
}
`

// redislockTest wires bsm/redislock as its README does, one Obtain a
// Lock with its default retry strategy (none: one try), its token from
// the client's seeded stream, Refresh to extend, and the validity its
// user must work out (the obtain's start plus the TTL, less Redlock's
// drift margin).
const redislockTest = `package rs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bsm/redislock"

	"github.com/locksim/locksim/locksimtest"
)

type lock struct {
	c    *locksimtest.RedisClient
	cl   *redislock.Client
	lock *redislock.Lock
}

func newLock(c *locksimtest.RedisClient) locksimtest.Locker {
	return &lock{c: c, cl: redislock.New(c.Nodes[0])}
}

func (l *lock) validity(start time.Time) time.Time {
	return start.Add(l.c.TTL - l.c.TTL/100 - 2*time.Millisecond)
}

func (l *lock) Lock(ctx context.Context) (time.Time, error) {
	start := time.Now()
	lk, err := l.cl.Obtain(ctx, "resource-lock", l.c.TTL, &redislock.Options{Token: fmt.Sprintf("%s-%016x", l.c.Name, l.c.Rand.Uint64())})
	if err != nil {
		return time.Time{}, err
	}
	l.lock = lk
	return l.validity(start), nil
}

func (l *lock) Unlock(ctx context.Context) error { return l.lock.Release(ctx) }

func (l *lock) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	if err := l.lock.Refresh(ctx, l.c.TTL, nil); err != nil {
		return time.Time{}, err
	}
	return l.validity(start), nil
}

func TestLock(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("redislock"))
}
`

// redislockBackoffTest wires bsm/redislock before Options.Token (its
// tokens come from crypto/rand, which locksim seeds per run) with the
// retry strategy its README suggests: an exponential backoff from 16 ms
// to 512 ms, twelve retries, a promise of about 3 s of trying
// (16+16+16+32+64+128+256+5×512 ms), never more than a 512 ms backoff and
// a try apart, stated to the check with Retries. Releases before v0.9.4
// also obtain by plain SET NX, which leaks the lock when go-redis retries
// a SET whose reply was lost (TestRedislockLostReplyLeaksTheLock): the
// wiring turns go-redis's own retries off, as a user who knows that bug
// deploys it, so that the check judges the backoff alone.
const redislockBackoffTest = `package rs

import (
	"context"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/locksimtest"
)

type lock struct {
	c    *locksimtest.RedisClient
	cl   *redislock.Client
	lock *redislock.Lock
}

func newLock(c *locksimtest.RedisClient) locksimtest.Locker {
	return &lock{c: c, cl: redislock.New(c.Nodes[0])}
}

func (l *lock) validity(start time.Time) time.Time {
	return start.Add(l.c.TTL - l.c.TTL/100 - 2*time.Millisecond)
}

func (l *lock) Lock(ctx context.Context) (time.Time, error) {
	start := time.Now()
	backoff := redislock.LimitRetry(redislock.ExponentialBackoff(16*time.Millisecond, 512*time.Millisecond), 12)
	lk, err := l.cl.Obtain(ctx, "resource-lock", l.c.TTL, &redislock.Options{RetryStrategy: backoff})
	if err != nil {
		return time.Time{}, err
	}
	l.lock = lk
	return l.validity(start), nil
}

func (l *lock) Unlock(ctx context.Context) error { return l.lock.Release(ctx) }

func (l *lock) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	if err := l.lock.Refresh(ctx, l.c.TTL, nil); err != nil {
		return time.Time{}, err
	}
	return l.validity(start), nil
}

func TestLock(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("redislock"),
		locksimtest.Retries(3*time.Second, 640*time.Millisecond),
		locksimtest.RedisOptions(func(o *redis.Options) { o.MaxRetries = -1 }))
}
`

// pairModule is a module of its own at dir that requires locksim (this
// tree) and the given library version, with test as its only file; it
// skips the test when the module proxy cannot serve the version.
func pairModule(t testing.TB, library, version, test string, replaces ...string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/rs\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/locksim/locksim v0.0.0\n\t" + library + " " + version +
		"\n)\n\nreplace github.com/locksim/locksim => " + root + "\n"
	for _, r := range replaces {
		gomod += "\nreplace " + r + "\n"
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "pair_test.go": test} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Skipf("cannot fetch %s %s from the module proxy (%v):\n%s", library, version, err, out)
	}
	return dir
}

// timedSweep builds the test binary of a pair's module and runs its
// check once, without minimising: its output, the CPU time of it and its
// worker processes, and its wall time (what docs/PERFORMANCE.md reports
// as the time to the first failing seed).
func timedSweep(t testing.TB, dir string) (string, time.Duration, time.Duration, error) {
	t.Helper()
	buildPair(t, dir)
	return runPair(dir, "^TestLock$")
}

// buildPair builds the test binary of a pair's module, pair.test.
func buildPair(t testing.TB, dir string) {
	t.Helper()
	build := exec.Command("go", "test", "-c", "-o", "pair.test", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c in %s: %v\n%s", dir, err, out)
	}
}

// runPair runs the check test of a pair's built module once, without
// minimising and from no kept repro: its output, the CPU time of it and
// its worker processes (waited for, so counted in its own), and its wall
// time.
func runPair(dir, test string) (string, time.Duration, time.Duration, error) {
	os.RemoveAll(filepath.Join(dir, "testdata"))
	cmd := exec.Command("./pair.test", "-test.run="+test, "-locksim.minimize=false")
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return string(out), cpu, wall, err
}

// pairTest runs go test in a pair's module.
func pairTest(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"test", "-count=1"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// redsync v4.0.3's Extend (and Unlock) reported success on a key that had
// expired or that another client held: it compared the script's int64
// reply with "ERR" and with an untyped 0 (PR #61, fixed in v4.0.4). A
// holder that stalls past its validity and then extends, trusting the
// answer (the default misuse), is told it holds while another does. The
// default check tells the two apart on the same seeds, and the printed
// replay line reproduces the failure.
func TestRedsyncExtendOnAnExpiredKeyIsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds redsync twice in modules of their own")
	}
	tellApart(t, "github.com/go-redsync/redsync/v4", "v4.0.3", "v4.0.4", redsyncV40Test, "redsync", lateExtend)
}

// redsync v1.2.0 had the same bug in the v1 line: Extend and Unlock
// took any reply of the script for success (PR #38, fixed in v1.3.0).
// v1's go.mod asks for redigo's retracted v2.0.0+incompatible; the
// module pins redigo v1.9.3, which locksim's pools are.
func TestRedsyncV1ExtendOnAnExpiredKeyIsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds redsync twice in modules of their own")
	}
	tellApart(t, "github.com/go-redsync/redsync", "v1.2.0", "v1.3.0", redsyncV1Test, "redsync", lateExtend,
		"github.com/gomodule/redigo => github.com/gomodule/redigo v1.9.3")
}

// lateExtend is what the failure of an Extend that reports success on
// another client's key says: two holders, after a late extend.
var lateExtend = []string{"mutual-exclusion", "extend after its validity ended → granted"}

// go-zero v1.3.1 kept a reentrancy count in the process (PR #1366): a
// second Acquire, go-zero's way to extend, returned true without a word
// to Redis, and Release skipped the DEL while the count stayed above
// zero, so the key expired under a holder that had extended it, and a
// later Acquire of the same client was granted with no key at all. PR
// #1704 ("remove reentrance in redislock, timeout bug") took it out in
// v1.3.2. The default check tells the two apart.
func TestGoZeroReentrantExtendIsFound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-zero twice in modules of their own")
	}
	tellApart(t, "github.com/zeromicro/go-zero", "v1.3.1", "v1.3.2", goZeroTest, "go-zero", []string{"mutual-exclusion"})
}

// bsm/redislock v0.9.3 obtained by SET NX: when the reply of an applied
// SET was lost, go-redis's retry of it failed on the lock's own key, and
// Obtain said ErrNotObtained while the node held the lock in its name for
// a TTL, for no one. v0.9.4 (PR #71) obtains by a script that takes a key
// already holding its token for a grant. The default check reports the
// leaked lock of v0.9.3 and passes v0.9.4.
func TestRedislockLostReplyLeaksTheLock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds redislock twice in modules of their own")
	}
	tellApart(t, "github.com/bsm/redislock", "v0.9.3", "v0.9.4", redislockTest, "redislock", []string{"leaked-lock at", "not obtained"})
}

// bsm/redislock v0.8.2 moved Obtain's backoff to a ticker made at the
// first backoff and never reset (PR #52), so an exponential backoff's
// retries came at its shortest wait and were spent at once: Obtain gave
// up after a fraction of the time its strategy promised, while the lock
// was about to be free. v0.9.1 (PR #58) resets the ticker. The default
// check, told the strategy's promise, reports v0.9.0's Lock giving up
// while the lock was free, and passes v0.9.1.
func TestRedislockBackoffGivesUpEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds redislock twice in modules of their own")
	}
	tellApart(t, "github.com/bsm/redislock", "v0.9.0", "v0.9.1", redislockBackoffTest, "redislock", []string{"gave-up-while-free at", "not obtained"})
}

// tellApart checks a released bug/fix pair: the buggy release fails the
// default check of the lock called name, saying each of want, the
// printed seed line fails again, and the fixed release passes the same
// 300 seeds.
func tellApart(t *testing.T, library, buggyVersion, fixedVersion, test, name string, want []string, replaces ...string) {
	t.Helper()
	buggy := pairModule(t, library, buggyVersion, test, replaces...)
	out, cpu, wall, err := timedSweep(t, buggy)
	ok := err != nil && strings.Contains(out, "locksim: "+name+" has a bug")
	for _, w := range want {
		ok = ok && strings.Contains(out, w)
	}
	if !ok {
		t.Fatalf("go test of %s %s did not fail saying %q (err %v):\n%s", library, buggyVersion, want, err, out)
	}
	m := regexp.MustCompile(`replay:   cd \S+ && go test -run '(\S+)' -locksim\.seed=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no replay line in:\n%s", out)
	}
	t.Logf("%s %s: first failing seed %s, found in %.2f CPU-s (%.2f s), the test binary built:\n%s", library, buggyVersion, m[2], cpu.Seconds(), wall.Seconds(), out)
	os.RemoveAll(filepath.Join(buggy, "testdata"))
	if again, err := pairTest(buggy, "-run", m[1], "-locksim.seed="+m[2], "-locksim.minimize=false", "."); err == nil ||
		!strings.Contains(again, "locksim: "+name+" has a bug (seed "+m[2]+")") {
		t.Fatalf("the replay line did not reproduce the failure (err %v):\n%s", err, again)
	}
	fixed := pairModule(t, library, fixedVersion, test, replaces...)
	if out, err := pairTest(fixed, "-run", "^TestLock$", "-v", "."); err != nil || !strings.Contains(out, "no bug in 300 seeds") {
		t.Fatalf("go test of %s %s failed the default check (err %v):\n%s", library, fixedVersion, err, out)
	}
}

// BenchmarkTimeToFirstFailure is the time the default check takes to
// report the first failing seed of each buggy release of reports/PAIRS.md:
// its test binary (built before the clock starts) run from its start to
// its failure report, without minimising, the sweep in worker processes.
// cpu-s/find is the CPU time of the binary and its workers, wall-s/find
// its wall time, first-seed the failing seed it reports (every run the
// same: the sweep is deterministic).
//
//	go test ./internal/outoftree -run XXX -bench TimeToFirstFailure -benchtime 3x
func BenchmarkTimeToFirstFailure(b *testing.B) {
	pairs := []struct {
		name, library, version, test, run string
		replaces                          []string
	}{
		{"redsync-v4.12.0", "github.com/go-redsync/redsync/v4", "v4.12.0", redsyncTest, "^TestRedsync$", nil},
		{"redsync-v4.0.3", "github.com/go-redsync/redsync/v4", "v4.0.3", redsyncV40Test, "^TestLock$", nil},
		{"redsync-v1.2.0", "github.com/go-redsync/redsync", "v1.2.0", redsyncV1Test, "^TestLock$",
			[]string{"github.com/gomodule/redigo => github.com/gomodule/redigo v1.9.3"}},
		{"go-zero-v1.3.1", "github.com/zeromicro/go-zero", "v1.3.1", goZeroTest, "^TestLock$", nil},
		{"redislock-v0.9.0", "github.com/bsm/redislock", "v0.9.0", redislockBackoffTest, "^TestLock$", nil},
		{"redislock-v0.9.3", "github.com/bsm/redislock", "v0.9.3", redislockTest, "^TestLock$", nil},
	}
	seedLine := regexp.MustCompile(`has a bug \(seed (\d+)`)
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) {
			dir := pairModule(b, p.library, p.version, p.test, p.replaces...)
			buildPair(b, dir)
			var cpu, wall time.Duration
			seed := 0
			for b.Loop() {
				out, c, w, err := runPair(dir, p.run)
				m := seedLine.FindStringSubmatch(out)
				if err == nil || m == nil {
					b.Fatalf("%s %s did not fail the default check (err %v):\n%s", p.library, p.version, err, out)
				}
				seed, _ = strconv.Atoi(m[1])
				cpu, wall = cpu+c, wall+w
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/find")
			b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/find")
			b.ReportMetric(float64(seed), "first-seed")
			b.ReportMetric(0, "ns/op")
		})
	}
}
