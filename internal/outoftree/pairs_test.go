package outoftree

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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

func TestRedsync(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("redsync"))
}
`

// pairModule is a module of its own at dir that requires locksim (this
// tree) and the given library version, with test as its only file; it
// skips the test when the module proxy cannot serve the version.
func pairModule(t *testing.T, library, version, test string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/rs\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/locksim/locksim v0.0.0\n\t" + library + " " + version +
		"\n)\n\nreplace github.com/locksim/locksim => " + root + "\n"
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
	const library = "github.com/go-redsync/redsync/v4"
	buggy := pairModule(t, library, "v4.0.3", redsyncV40Test)
	out, err := pairTest(buggy, "-run", "^TestRedsync$", "-locksim.minimize=false", ".")
	if err == nil || !strings.Contains(out, "locksim: redsync has a bug") || !strings.Contains(out, "mutual-exclusion") ||
		!strings.Contains(out, "extend after its validity ended → granted") {
		t.Fatalf("go test of redsync v4.0.3 did not fail with two holders after a late extend (err %v):\n%s", err, out)
	}
	t.Logf("redsync v4.0.3:\n%s", out)
	m := regexp.MustCompile(`replay:   cd \S+ && go test -run '(\S+)' -locksim\.seed=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no replay line in:\n%s", out)
	}
	os.RemoveAll(filepath.Join(buggy, "testdata"))
	if again, err := pairTest(buggy, "-run", m[1], "-locksim.seed="+m[2], "-locksim.minimize=false", "."); err == nil ||
		!strings.Contains(again, "locksim: redsync has a bug (seed "+m[2]+")") {
		t.Fatalf("the replay line did not reproduce the failure (err %v):\n%s", err, again)
	}
	fixed := pairModule(t, library, "v4.0.4", redsyncV40Test)
	if out, err := pairTest(fixed, "-run", "^TestRedsync$", "-v", "."); err != nil || !strings.Contains(out, "no bug in 300 seeds") {
		t.Fatalf("go test of redsync v4.0.4 failed the default check (err %v):\n%s", err, out)
	}
}
