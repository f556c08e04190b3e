// Package outoftree checks locksim as a user's module sees it: a module of
// its own, outside this tree, that imports locksim by its module path and
// tests a lock of its own with locksimtest.Check.
package outoftree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const lockFile = `package mylock

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/variants"
)

// mine wraps the corrected DHT lock; broken, it believes every acquire.
type mine struct {
	inner  algorithm.Lock
	broken bool
}

func (l mine) Acquire(env algorithm.Env, key string) algorithm.Grant {
	g := l.inner.Acquire(env, key)
	if l.broken {
		g.Granted = true
	}
	return g
}

func (l mine) Release(env algorithm.Env, key string, g algorithm.Grant) { l.inner.Release(env, key, g) }

func Variant() algorithm.Variant {
	base, _ := variants.Lookup("corrected")
	return algorithm.Variant{Name: "mylock", Summary: "a lock outside locksim",
		New: func() algorithm.Lock { return mine{base.New(), BROKEN} }, Envelope: base.Envelope}
}
`

const testFile = `package mylock

import (
	"testing"

	"github.com/locksim/locksim/locksimtest"
)

func TestMyLock(t *testing.T) {
	locksimtest.Check(t, Variant(), locksimtest.Faults("all"), locksimtest.Seeds(200))
}

func TestMyLockExplored(t *testing.T) {
	locksimtest.Explore(t, Variant(), 1)
}
`

// A throwaway module imports locksim through a replace to this checkout:
// go test fails on the broken lock and prints a replay line, the replay
// line reproduces the failure, and the fixed lock passes.
func TestALockOutsideTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a module of its own")
	}
	_, write, gotest := userModule(t)
	write("mylock_test.go", testFile)
	write("mylock.go", strings.Replace(lockFile, "BROKEN", "true", 1))

	out, err := gotest("-run", "^TestMyLock$", ".")
	if err == nil || !strings.Contains(out, "locksim: mylock has a bug") {
		t.Fatalf("go test of the broken lock did not fail with a bug (err %v):\n%s", err, out)
	}
	t.Logf("go test of the broken lock:\n%s", out)
	m := regexp.MustCompile(`replay:   cd \S+ && go test -run '(\S+)' -locksim\.seed=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no replay line in:\n%s", out)
	}
	again, err := gotest("-run", m[1], "-locksim.seed="+m[2], ".")
	if err == nil || !strings.Contains(again, "locksim: mylock has a bug (seed "+m[2]+",") {
		t.Fatalf("the replay line did not reproduce the failure (err %v):\n%s", err, again)
	}
	// The minimised repro file is kept under testdata/locksim, the next
	// go test replays it first, and its replay line works as printed.
	kept, err := gotest("-run", "^TestMyLock$", ".")
	f := regexp.MustCompile(`replay:   cd \S+ && go test -run '\S+' -locksim\.replay=(\S+)`).FindStringSubmatch(kept)
	if err == nil || f == nil || !strings.Contains(kept, "a failure kept by an earlier run, testdata/locksim/TestMyLock/") {
		t.Fatalf("the kept failure was not replayed first (err %v):\n%s", err, kept)
	}
	if again, err := gotest("-run", m[1], "-locksim.replay="+f[1], "."); err == nil || !strings.Contains(again, "has a bug (replay of "+f[1]+")") {
		t.Fatalf("the replay of the repro file did not reproduce the failure (err %v):\n%s", err, again)
	}
	// Explore finds the broken lock's fewest-fault counterexample, and
	// its repro replays through the same test.
	ex, err := gotest("-run", "^TestMyLockExplored$", ".")
	g := regexp.MustCompile(`replay:   cd \S+ && go test -run '(\S+)' -locksim\.replay=(\S+)`).FindStringSubmatch(ex)
	if err == nil || g == nil || !strings.Contains(ex, "the fewest there are") {
		t.Fatalf("Explore of the broken lock did not fail with a counterexample and a replay line (err %v):\n%s", err, ex)
	}
	if again, err := gotest("-run", g[1], "-locksim.replay="+g[2], "."); err == nil || !strings.Contains(again, "has a bug (replay of "+g[2]+")") || !strings.Contains(again, "the same run") {
		t.Fatalf("the explored schedule's repro did not replay to the same run (err %v):\n%s", err, again)
	}
	write("mylock.go", strings.Replace(lockFile, "BROKEN", "false", 1))
	if out, err := gotest("-run", "TestMyLock", "-v", "."); err != nil || !strings.Contains(out, "no bug in 200 seeds") || !strings.Contains(out, "no violation in all") ||
		!strings.Contains(out, "passes now: fixed") {
		t.Fatalf("go test of the fixed lock failed (err %v):\n%s", err, out)
	}
}

// userModule makes a throwaway module that imports this checkout as
// github.com/locksim/locksim: its directory, a way to write a file into it
// (directories made), and a way to run go test in it offline.
func userModule(t *testing.T) (dir string, write func(name, body string), goTest func(args ...string) (string, error)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write = func(name, body string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/mylock\n\ngo 1.26.0\n\nrequire github.com/locksim/locksim v0.0.0\n\nreplace github.com/locksim/locksim => "+root+"\n")
	write("go.sum", string(sum))
	goCmd := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return dir, write, func(args ...string) (string, error) { return goCmd(append([]string{"test", "-count=1"}, args...)...) }
}

// A main of the user's own that calls cli.Main with their lock gets the
// whole CLI for it: the lock is listed, swept and compared beside the
// built-in ones, and the replay line printed names the user's program and
// reproduces the failure when pasted.
func TestYourLockInTheWholeCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program of its own")
	}
	dir, write, _ := userModule(t)
	write("mylock.go", strings.Replace(lockFile, "BROKEN", "true", 1))
	write("cmd/mylocksim/main.go", `package main

import (
	"example.com/mylock"
	"github.com/locksim/locksim/cli"
)

func main() { cli.Main(mylock.Variant()) }
`)
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := run("run", "./cmd/mylocksim", "variants"); code != 0 || !strings.Contains(out, "mylock ") || !strings.Contains(out, "corrected ") {
		t.Fatalf("variants (exit %d) does not list mylock beside the built-in ones:\n%s", code, out)
	}
	out, code := run("run", "./cmd/mylocksim", "sweep", "-variant", "mylock", "-n", "100", "-out", "repros")
	line := regexp.MustCompile(`(?m)^\s*replay:\s+(go run ./cmd/mylocksim replay .+)$`).FindStringSubmatch(out)
	if code != 1 || line == nil {
		t.Fatalf("a sweep of the broken lock exited %d, want 1 with a replay line that names ./cmd/mylocksim:\n%s", code, out)
	}
	first := regexp.MustCompile(`(?m)^\s+((mutual-exclusion|lost-update) at [0-9.]+s)`).FindStringSubmatch(out)
	if first == nil {
		t.Fatalf("the sweep's failure names no safety violation:\n%s", out)
	}
	if again, code := run(strings.Fields(line[1])[1:]...); code != 1 || !strings.Contains(again, "verdict: VIOLATION") || !strings.Contains(again, first[1]+":") {
		t.Fatalf("the printed replay line %q did not reproduce the failure (exit %d):\n%s", line[1], code, again)
	}
	out, code = run("run", "./cmd/mylocksim", "compare", "-n", "5", "-costs", "0", "-variants", "mylock,corrected", "-faults", "threads", "-duration", "1m", "-minimize=false")
	if code != 0 || !regexp.MustCompile(`(?m)^\| mylock \| ✗ `).MatchString(out) || !regexp.MustCompile(`(?m)^\| corrected \| ✓ `).MatchString(out) {
		t.Fatalf("compare (exit %d) does not show mylock broken beside corrected:\n%s", code, out)
	}
}
