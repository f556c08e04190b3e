package locksimtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// leased is the thirty-line go-redis lock people write: SET NX PX on one
// node, release by compare-and-delete, a validity that leaves Redlock's
// drift margin, and an Extend that is either a compare-and-PEXPIRE (the
// key must still be its own) or, the mistake, a plain PEXPIRE.
type leased struct {
	c           redis.UniversalClient
	ttl         time.Duration
	name        string
	next        func() uint64
	value       string
	plainExtend bool
	noMargin    bool // the validity is the whole TTL: no margin for a node clock that runs fast
	// oneTry: Lock tries once and reports what it got; idempotent: by a
	// script that takes a key already holding its own value for a grant,
	// so that go-redis's retry of a request whose reply was lost finds it
	// obtained (without, the retry's SET NX fails on the lock's own key)
	oneTry, idempotent bool
	// timeoutIsGrant: a Lock whose caller's deadline passes returns as if
	// it had the lock (an error dropped on the way out)
	timeoutIsGrant bool
	// budget: Lock retries for this long, then reports "not obtained";
	// spent: the mistake of bsm/redislock v0.9.0, a backoff whose wait is
	// never applied, so the retries are spent at once
	budget time.Duration
	spent  bool
	// takeExtend: Extend extends the key if it is its own and takes it
	// again if it is gone (redsync's WithSetNXOnExtend), answering 1 for
	// both; misread, the mistake: the take returns SET's status reply,
	// which the caller reads as an error, so a refresher that ran as its
	// holder unlocked says "not extended" while it took the lock again
	takeExtend, misread bool
	// backoff: the wait doubles from 25 ms after each failed try, capped
	// at 200 ms, or, the mistake (uncapped), never capped
	backoff, uncapped bool
}

var setOrOwn = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return 1 end if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return 1 end return 0`)

// try is one attempt at the key.
func (l *leased) try(ctx context.Context) (bool, error) {
	if l.idempotent {
		n, err := setOrOwn.Run(ctx, l.c, []string{"resource-lock"}, l.value, l.ttl.Milliseconds()).Int64()
		return n == 1, err
	}
	return l.c.SetNX(ctx, "resource-lock", l.value, l.ttl).Result()
}

var (
	touchOrTake        = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return 1 end return 0`)
	touchOrTakeMisread = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2])`)
)

var compareAndPexpire = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

func (l *leased) validity(start time.Time) time.Time {
	if l.noMargin {
		return start.Add(l.ttl)
	}
	return start.Add(l.ttl - l.ttl/100 - 2*time.Millisecond)
}

func (l *leased) Lock(ctx context.Context) (time.Time, error) {
	called := time.Now()
	for tries := 1; ; tries++ {
		start := time.Now()
		l.value = fmt.Sprintf("%s-%016x", l.name, l.next())
		ok, err := l.try(ctx)
		if err == nil && ok {
			return l.validity(start), nil
		}
		if l.oneTry || l.budget > 0 && (l.spent && tries == 3 || time.Since(called) >= l.budget) {
			if err == nil {
				err = errors.New("not obtained")
			}
			return time.Time{}, err
		}
		wait := 100 * time.Millisecond
		switch {
		case l.spent:
			wait = time.Millisecond
		case l.backoff:
			wait = 25 * time.Millisecond << min(tries-1, 20)
			if !l.uncapped {
				wait = min(wait, 200*time.Millisecond)
			}
		}
		select {
		case <-ctx.Done():
			if l.timeoutIsGrant {
				return l.validity(start), nil
			}
			return time.Time{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func (l *leased) Unlock(ctx context.Context) error {
	return compareAndDelete.Run(ctx, l.c, []string{"resource-lock"}, l.value).Err()
}

func (l *leased) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	var ok bool
	var err error
	switch {
	case l.takeExtend:
		script := touchOrTake
		if l.misread {
			script = touchOrTakeMisread
		}
		var n int64
		n, err = script.Run(ctx, l.c, []string{"resource-lock"}, l.value, l.ttl.Milliseconds()).Int64()
		ok = n == 1
	case l.plainExtend:
		ok, err = l.c.PExpire(ctx, "resource-lock", l.ttl).Result()
	default:
		var n int64
		n, err = compareAndPexpire.Run(ctx, l.c, []string{"resource-lock"}, l.value, l.ttl.Milliseconds()).Int64()
		ok = n == 1
	}
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, errors.New("not extended: the key is not ours")
	}
	return l.validity(start), nil
}

func newLeased(plain, noMargin bool) func(c *RedisClient) Locker {
	return func(c *RedisClient) Locker {
		return &leased{c: c.Nodes[0], ttl: c.TTL, name: c.Name, next: c.Rand.Uint64, plainExtend: plain, noMargin: noMargin}
	}
}

const leasedEnv = "LOCKSIMTEST_LEASED"

// runLeased runs TestLeasedLock, as which, in a test binary of its own in
// dir, without minimising, with args.
func runLeased(dir, which string, args ...string) (string, error) {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestLeasedLock$", "-test.v", "-locksim.minimize=false"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), leasedEnv+"="+which)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestLeasedLock is run by TestAnExtendWithoutAnOwnerCheckIsCaught, in a
// process of its own: CheckRedis with every default.
func TestLeasedLock(t *testing.T) {
	switch os.Getenv(leasedEnv) {
	case "plain":
		CheckRedis(t, newLeased(true, false), Name("plain-pexpire"))
	case "owner":
		CheckRedis(t, newLeased(false, false), Name("owner-pexpire"))
	case "no-margin":
		CheckRedis(t, newLeased(false, true), Name("no-margin"))
	case "timeout-is-grant":
		CheckRedis(t, func(c *RedisClient) Locker {
			l := newLeased(false, false)(c).(*leased)
			l.timeoutIsGrant = true
			return l
		}, Name("timeout-is-grant"))
	case "one-try", "one-try-idempotent":
		CheckRedis(t, func(c *RedisClient) Locker {
			l := newLeased(false, false)(c).(*leased)
			l.oneTry, l.idempotent = true, os.Getenv(leasedEnv) == "one-try-idempotent"
			return l
		}, Name(os.Getenv(leasedEnv)))
	case "budget", "budget-spent", "backoff", "backoff-uncapped":
		// Locks that retry, with the promise they state; idempotent, so
		// that a lost reply leaks nothing: the lock under test only gives
		// up, or sleeps through a free lock.
		which := os.Getenv(leasedEnv)
		budget, gap := 2*time.Second, 250*time.Millisecond
		if strings.HasPrefix(which, "backoff") {
			budget = 10 * time.Second
		}
		CheckRedis(t, func(c *RedisClient) Locker {
			l := newLeased(false, false)(c).(*leased)
			l.budget, l.idempotent = budget, true
			l.spent = which == "budget-spent"
			l.backoff, l.uncapped = strings.HasPrefix(which, "backoff"), which == "backoff-uncapped"
			return l
		}, Name(which), Retries(budget, gap))
	case "take-extend", "take-extend-misread":
		CheckRedis(t, func(c *RedisClient) Locker {
			l := newLeased(false, false)(c).(*leased)
			l.takeExtend, l.misread = true, os.Getenv(leasedEnv) == "take-extend-misread"
			return l
		}, Name(os.Getenv(leasedEnv)))
	default:
		t.Skip("run by TestAnExtendWithoutAnOwnerCheckIsCaught")
	}
}

// An Extend that is a plain PEXPIRE (no owner check) extends whoever holds
// the key: a holder that stalled past its validity and then extended, as
// careless code does, is told it holds while another client does. The
// default check (every default: its seeds, its envelope, its misuse)
// catches it as two holders; the same lock with a compare-and-PEXPIRE
// passes the same seeds.
func TestAnExtendWithoutAnOwnerCheckIsCaught(t *testing.T) {
	brokenAndFixed(t, "plain", "plain-pexpire", "owner", "the plain PEXPIRE extend (two holders after a late extend)",
		"mutual-exclusion at", "extend after its validity ended → granted")
}

// -locksim.faults names the classes a check sweeps, and the replay lines
// of a failure carry it: without faults (and so without misuse) the plain
// PEXPIRE lock passes; under pause alone it fails, and its printed seed
// line fails again.
func TestFaultsFlagChoosesTheClasses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary three times")
	}
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		return runLeased(dir, "plain", append([]string{"-locksim.seeds=100"}, args...)...)
	}
	if out, err := run("-locksim.faults=none"); err != nil || !strings.Contains(out, "no bug in 100 seeds") {
		t.Fatalf("without faults the plain PEXPIRE lock should pass (err %v):\n%s", err, out)
	}
	out, err := run("-locksim.faults=pause")
	line := regexp.MustCompile(`-locksim\.faults=pause -locksim\.seed=(\d+)`).FindStringSubmatch(out)
	if err == nil || line == nil {
		t.Fatalf("under pause the plain PEXPIRE lock should fail with a seed line that names the classes (err %v):\n%s", err, out)
	}
	os.RemoveAll(filepath.Join(dir, "testdata"))
	if again, err := run("-locksim.faults=pause", "-locksim.seed="+line[1]); err == nil || !strings.Contains(again, "(seed "+line[1]+")") {
		t.Fatalf("the seed line did not fail again (err %v):\n%s", err, again)
	}
}

// A validity of the whole TTL, with no margin for a node clock that runs
// fast (inside the envelope's 1%), lets the key expire while its holder
// still uses the lock. Seeds draw every node clock at the edge of the
// drift bound often enough that the default check catches it; the same
// lock with Redlock's margin passes (TestAnExtendWithoutAnOwnerCheckIsCaught).
func TestAValidityWithoutADriftMarginIsCaught(t *testing.T) {
	brokenAndFixed(t, "no-margin", "no-margin", "", "the lock without a drift margin (with drifting clocks)", "drift")
}

// A one-try Lock whose SET NX lost its reply after the node applied it is
// retried by go-redis, and the retry fails on the lock's own key: Lock
// reports "not obtained" while the node holds the lock in its name, and
// nobody can take it until it expires (bsm/redislock before v0.9.4). The
// default check reports it as a leaked lock; the same lock taking a key
// that already holds its own value for a grant passes the same seeds.
func TestALockThatReportsFailureWhileItHoldsIsCaught(t *testing.T) {
	brokenAndFixed(t, "one-try", "one-try", "one-try-idempotent", "the one-try lock (a leaked lock)", "leaked-lock at", "Lock returned failure")
}

// A Lock that, when its caller's deadline passes, returns as if it held
// the lock (an error dropped on the way out) is two holders as soon as a
// caller's deadline is shorter than a retry, as the default misuse draws
// it; the same lock returning the context's error passes
// (TestAnExtendWithoutAnOwnerCheckIsCaught's owner-checked lock).
func TestALockThatTakesItsDeadlineForAGrantIsCaught(t *testing.T) {
	// The cause line, by counterfactual replay, names the misuse it needs.
	brokenAndFixed(t, "timeout-is-grant", "timeout-is-grant", "", "the lock that takes its deadline for a grant (two holders, needing a short deadline)",
		"mutual-exclusion at", "cause: mutual-exclusion: no-short-deadlines (that world change alone removes it")
}

// A Lock that promises to retry for two seconds but spends its tries at
// once (bsm/redislock v0.9.0's backoff that never waited) reports "not
// obtained" while the lock is about to be free: the default check, told
// the promise (Retries), reports it as gave-up-while-free; the same lock
// waiting between its tries passes the same seeds.
func TestALockThatGivesUpWhileTheLockIsFreeIsCaught(t *testing.T) {
	brokenAndFixed(t, "budget-spent", "budget-spent", "budget", "the lock that spends its retries at once (giving up while the lock is free)",
		"gave-up-while-free at", "gave up while the lock was acquirable")
}

// A Lock whose backoff was meant to be capped at 200 ms but is not (its
// waits double for as long as it waits) promises a try at least every
// 250 ms and then sleeps through a free lock: the default check, told the
// promise, reports it as starved-while-free (per-client starvation against
// the promise, which is also the lock's failover bound); the same lock
// with its cap passes the same seeds.
func TestALockThatSleepsThroughAFreeLockIsCaught(t *testing.T) {
	brokenAndFixed(t, "backoff-uncapped", "backoff-uncapped", "backoff", "the lock whose backoff has no cap (sleeping through a free lock)",
		"starved-while-free at", "a Lock that stopped trying")
}

// An Extend that takes the key again when it is gone (redsync's
// WithSetNXOnExtend), run by a refresher as its holder unlocks, may take
// the lock back after the Unlock. Said truthfully, the careful application
// unlocks once more and nothing is lost; misread (the take returns SET's
// status reply, which go-redis's Int64 takes for an error), the refresher
// says "not extended", the Unlock said "released", and the lock stays held
// for no one. The default misuse runs such refreshers at some releases and
// reports the leaked lock, with its cause; the truthful one passes.
func TestARefresherThatTakesTheLockBackUnsaidIsCaught(t *testing.T) {
	brokenAndFixed(t, "take-extend-misread", "take-extend-misread", "take-extend", "the refresher that took the lock back unsaid (a leaked lock after Unlock)",
		"'s Unlock returned success at", "no-stray-refresh")
}

// brokenAndFixed runs the leased lock broken under the default check, in a
// test binary of its own, and fails the test unless it fails as name with
// each of want in its output (what says which lock, for the message); then
// runs fixed, when given, and fails the test unless it passes the default
// 300 seeds.
func brokenAndFixed(t *testing.T, broken, name, fixed, what string, want ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the test binary, 300 seeds a run")
	}
	out, err := runLeased(t.TempDir(), broken)
	ok := err != nil && strings.Contains(out, "locksim: "+name+" has a bug")
	for _, w := range want {
		ok = ok && strings.Contains(out, w)
	}
	if !ok {
		t.Fatalf("%s was not caught by the default check saying %q (err %v):\n%s", what, want, err, out)
	}
	t.Logf("%s:\n%s", what, out)
	if fixed == "" {
		return
	}
	if out, err := runLeased(t.TempDir(), fixed); err != nil || !strings.Contains(out, "no bug in 300 seeds") {
		t.Fatalf("the fix of %s (%s) failed the default check (err %v):\n%s", what, fixed, err, out)
	}
}
