package locksimtest

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand"
	randv2 "math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// careless is a one-node go-redis lock that is right (SET NX PX, release
// by compare-and-delete) except on the releases where its coin says to
// DEL the key without looking: its bug shows only on some draws of the
// coin, and the coin is not the client's seeded stream.
type careless struct {
	c     redis.UniversalClient
	ttl   time.Duration
	value string
	coin  func() bool
}

var compareAndDelete = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (l *careless) Lock(ctx context.Context) (time.Time, error) {
	for {
		start := time.Now()
		ok, err := l.c.SetNX(ctx, "lock", l.value, l.ttl).Result()
		if err == nil && ok {
			return start.Add(l.ttl), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *careless) Unlock(ctx context.Context) error {
	if l.coin() {
		return l.c.Del(ctx, "lock").Err()
	}
	return compareAndDelete.Run(ctx, l.c, []string{"lock"}, l.value).Err()
}

// processStart is read when the test binary starts, outside every run:
// a worker process and the process that reruns its failure read another.
var processStart = time.Now()

// coins are the ways careless can toss, by the environment's name.
var coins = map[string]func(c *RedisClient) func() bool{
	// the global math/rand: locksim seeds it per run, so it replays
	"math-rand": func(*RedisClient) func() bool { return func() bool { return mathrand.Intn(3) == 0 } },
	// math/rand/v2's global functions, which nothing can seed
	"math-rand-v2": func(*RedisClient) func() bool { return func() bool { return randv2.IntN(3) == 0 } },
	// the wall clock read when the process started, outside the run
	"process-start": func(*RedisClient) func() bool {
		n := processStart.UnixNano() / 1000
		return func() bool { n = n*6364136223846793005 + 1442695040888963407; return n>>40%3 == 0 }
	},
}

const coinEnv = "LOCKSIMTEST_COIN"

// TestCarelessLock is run by TestAFailureThatDoesNotReplayIsAFinding, in
// a process of its own, with the coin its environment names.
func TestCarelessLock(t *testing.T) {
	coin := coins[os.Getenv(coinEnv)]
	if coin == nil {
		t.Skip("run by TestAFailureThatDoesNotReplayIsAFinding")
	}
	CheckRedis(t, func(c *RedisClient) Locker {
		return &careless{c: c.Nodes[0], ttl: c.TTL, value: fmt.Sprintf("%s-%016x", c.Name, c.Rand.Uint64()), coin: coin(c)}
	}, Name("careless"), Seeds(60))
}

// A lock whose failure depends on randomness or time locksim does not
// control never passes because its failure did not replay: drawn from
// math/rand/v2's global functions, or from the wall clock read when the
// process started, the failing seed runs another way when it is run again
// for its report, and that is a nondeterminism finding with its seed; the
// global math/rand, which locksim seeds per run, replays: its failure is
// an ordinary bug, and the printed seed line fails again.
func TestAFailureThatDoesNotReplayIsAFinding(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary four times")
	}
	run := func(coin string, args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCarelessLock$", "-test.v", "-locksim.minimize=false"}, args...)...)
		cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), coinEnv+"="+coin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, coin := range []string{"math-rand-v2", "process-start"} {
		out, err := run(coin)
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: the careless lock passed (err %v):\n%s", coin, err, out)
		}
		if !strings.Contains(out, "nondeterminism at") || !strings.Contains(out, "does not replay") || !strings.Contains(out, "replay:   ") {
			t.Fatalf("%s: the failure is not a nondeterminism finding with its replay line:\n%s", coin, out)
		}
	}
	out, err := run("math-rand")
	seed := regexp.MustCompile(`-locksim\.seed=(\d+)`).FindStringSubmatch(out)
	if err == nil || !strings.Contains(out, "locksim: careless has a bug") || strings.Contains(out, "nondeterminism at") || seed == nil {
		t.Fatalf("math/rand: the careless lock's failure is not an ordinary bug with a seed line (err %v):\n%s", err, out)
	}
	again, err := run("math-rand", "-locksim.seed="+seed[1])
	if err == nil || !strings.Contains(again, "locksim: careless has a bug (seed "+seed[1]+")") || strings.Contains(again, "nondeterminism at") {
		t.Fatalf("math/rand: the seed line did not fail again the same way (err %v):\n%s", err, again)
	}
}
