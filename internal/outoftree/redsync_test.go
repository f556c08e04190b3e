package outoftree

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// redsyncTest wires redsync, unmodified, as its README does, and checks it
// with every default of locksimtest.CheckRedis (Redlock's envelope, 300
// seeds, the misuse).
const redsyncTest = `package rs

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/locksim/locksim/locksimtest"
)

type lock struct{ m *redsync.Mutex }

func newLock(c *locksimtest.RedisClient) locksimtest.Locker {
	pools := make([]redsyncredis.Pool, len(c.Nodes))
	for i, n := range c.Nodes {
		pools[i] = goredis.NewPool(n)
	}
	return lock{redsync.New(pools...).NewMutex("resource-lock",
		redsync.WithExpiry(c.TTL),
		redsync.WithGenValueFunc(func() (string, error) { return fmt.Sprintf("%s-%016x", c.Name, c.Rand.Uint64()), nil }),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return time.Duration(50+c.Rand.IntN(200)) * time.Millisecond }))}
}

func (l lock) Lock(ctx context.Context) (time.Time, error) {
	err := l.m.LockContext(ctx)
	return l.m.Until(), err
}

func (l lock) Unlock(ctx context.Context) error {
	_, err := l.m.UnlockContext(ctx)
	return err
}

func (l lock) Extend(ctx context.Context) (time.Time, error) {
	ok, err := l.m.ExtendContext(ctx)
	if err == nil && !ok {
		err = errors.New("extend failed")
	}
	return l.m.Until(), err
}

func TestRedsync(t *testing.T) {
	locksimtest.CheckRedis(t, newLock, locksimtest.Name("redsync"))
}
`

// redsync v4.12.0 released the lock on every master when one master's
// touch failed during Extend, even when the others extended it (PR #151,
// fixed in v4.12.1). The default check tells the two apart on the same
// seeds, and the replay lines of v4.12.0's failure reproduce it.
func TestRedsyncExtendBugIsFoundInTheRealCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds redsync twice in modules of their own")
	}
	const seeds = "300" // CheckRedis's default
	const library = "github.com/go-redsync/redsync/v4"
	gotest := pairTest

	buggy := pairModule(t, library, "v4.12.0", redsyncTest)
	out, err := gotest(buggy, "-run", "^TestRedsync$", ".")
	if err == nil || !strings.Contains(out, "locksim: redsync has a bug") || !strings.Contains(out, "mutual-exclusion") {
		t.Fatalf("go test of redsync v4.12.0 did not fail with two holders (err %v):\n%s", err, out)
	}
	t.Logf("redsync v4.12.0:\n%s", out)
	m := regexp.MustCompile(`replay:   cd \S+ && go test -run '(\S+)' -locksim\.seed=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no replay line in:\n%s", out)
	}
	again, err := gotest(buggy, "-run", m[1], "-locksim.seed="+m[2], ".")
	if err == nil || !strings.Contains(again, "locksim: redsync has a bug (seed "+m[2]+",") {
		t.Fatalf("the replay line did not reproduce the failure (err %v):\n%s", err, again)
	}
	if err := os.Mkdir(filepath.Join(buggy, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept, err := gotest(buggy, "-run", "^TestRedsync$", "-artifacts", "-outputdir", filepath.Join(buggy, "out"), ".")
	f := regexp.MustCompile(`replay:   cd \S+ && go test -run '\S+' -locksim\.replay=(\S+)`).FindStringSubmatch(kept)
	if err == nil || f == nil {
		t.Fatalf("no kept repro file with -artifacts (err %v):\n%s", err, kept)
	}
	if again, err := gotest(buggy, "-run", m[1], "-locksim.replay="+f[1], "."); err == nil || !strings.Contains(again, "the same run") {
		t.Fatalf("the repro file did not replay to the same run (err %v):\n%s", err, again)
	}

	fixed := pairModule(t, library, "v4.12.1", redsyncTest)
	if out, err := gotest(fixed, "-run", "^TestRedsync$", "-v", "."); err != nil || !strings.Contains(out, "no bug in "+seeds+" seeds") {
		t.Fatalf("go test of redsync v4.12.1 failed on the same seeds (err %v):\n%s", err, out)
	}
}
