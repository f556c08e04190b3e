package locksimtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand"
	randv2 "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/realredis"
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
	// always: the naive lock, whose release is a plain DEL
	"always": func(*RedisClient) func() bool { return func() bool { return true } },
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

// A minimised CheckRedis failure keeps the lock's world (its nodes, hosts,
// threads and TTL: its deployment) and shrinks only the plan and the run's
// length; its kept repro replays to the same run, with the same finding.
func TestAMinimisedRedisReproKeepsItsWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCarelessLock$", "-test.v"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), coinEnv+"=always")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the naive lock passed:\n%s", out)
		}
		return string(out)
	}
	first := run()
	kind := regexp.MustCompile(`(?m)^\s+(mutual-exclusion|lost-update) at `).FindStringSubmatch(first)
	file := regexp.MustCompile(`-locksim\.replay=(\S+-min\.json)`).FindStringSubmatch(first)
	if kind == nil || file == nil {
		t.Fatalf("no minimised safety failure:\n%s", first)
	}
	data, err := os.ReadFile(filepath.Join(dir, file[1]))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Config sim.Config `json:"config"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	want, got := realredis.DefaultConfig(), r.Config
	if got.Nodes != want.Nodes || got.Hosts != want.Hosts || got.ThreadsPerHost != want.ThreadsPerHost || got.TTL != want.TTL ||
		got.HoldMin != want.HoldMin || got.HoldMax != want.HoldMax || got.LatencyMax != want.LatencyMax || got.Duration > want.Duration {
		t.Fatalf("the minimised repro left the lock's world: %+v, not %+v", got, want)
	}
	again := run("-locksim.replay=" + file[1])
	if !strings.Contains(again, "(the same run)") || !strings.Contains(again, "has a bug (replay of "+file[1]) ||
		!regexp.MustCompile(`(?m)^\s+`+kind[1]+` at .*\[bug\]`).MatchString(again) {
		t.Fatalf("the minimised repro does not replay to the same run with the same %s bug:\n%s", kind[1], again)
	}
}
