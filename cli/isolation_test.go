package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/variants"
)

// brokenCLIEnv makes the test binary a program of a user's own whose main
// is Main(brokenCLIVariants()...): locksim, with locks that take a worker
// down, to see each command contain them.
const brokenCLIEnv = "LOCKSIM_TEST_BROKEN_CLI"

func init() {
	if os.Getenv(brokenCLIEnv) == "1" {
		// Not on the goroutine that runs init, which is locked to its
		// thread: a main's goroutine is not, once main runs.
		go Main(brokenCLIVariants()...)
		select {}
	}
}

// brokenLock is corrected whose client h0/t0 makes a mistake in its first
// Acquire of every seed.
type brokenLock struct {
	base    algorithm.Lock
	mistake func(env algorithm.Env, key string)
	done    bool
}

func (b *brokenLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	if !b.done && env.ClientName() == "h0/t0" {
		b.done = true
		b.mistake(env, key)
	}
	return b.base.Acquire(env, key)
}

func (b *brokenLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	b.base.Release(env, key, g)
}

var cliHog [][]byte

// brokenCLIVariants: one that spins without calling its Env, one that
// allocates without bound, one that waits for its own goroutine's server
// call.
func brokenCLIVariants() []algorithm.Variant {
	base, err := variants.Lookup("corrected")
	if err != nil {
		panic(err)
	}
	mistakes := map[string]func(algorithm.Env, string){
		"spin": func(algorithm.Env, string) {
			for {
			}
		},
		"alloc": func(algorithm.Env, string) {
			for {
				cliHog = append(cliHog, make([]byte, 1<<20))
			}
		},
		"misuse": func(env algorithm.Env, key string) {
			s := env.Topology(key)[0]
			done := make(chan struct{})
			go func() { s.ReadKey(key); close(done) }()
			<-done
		},
	}
	var vs []algorithm.Variant
	for _, name := range []string{"spin", "alloc", "misuse"} {
		v := base
		v.Name, v.Summary = "broken-"+name, "corrected whose h0/t0 makes a mistake: "+name
		mistake := mistakes[name]
		v.New = func() algorithm.Lock { return &brokenLock{base: base.New(), mistake: mistake} }
		vs = append(vs, v)
	}
	return vs
}

// runBroken runs the locksim command with the broken variants in dir.
func runBroken(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), brokenCLIEnv+"=1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// compare, explore and minimize run their seeds in workers, as sweep does,
// with its flags: a lock that spins, eats memory or calls its Env from a
// goroutine of its own is a finding of its kind (a cell's abort, A, and
// story; a counterexample or an answer with its replay line), and the
// command ends as it does for any finding.
func TestCommandsContainBrokenLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and waits out a hang budget")
	}
	budget := []string{"-hang-after", "1s", "-memory-limit", "256MiB"}
	dir := t.TempDir()
	out, code := runBroken(t, dir, append([]string{"compare", "-variants", "broken-spin,broken-misuse", "-faults", "loss", "-n", "2",
		"-costs", "0", "-duration", "1m", "-json"}, budget...)...)
	if code != 0 || strings.Count(out, `"aborted": 2`) != 2 ||
		!regexp.MustCompile(`"story": "hang at [^"]*-hang-after`).MatchString(out) || !strings.Contains(out, `"story": "misuse at `) {
		t.Fatalf("compare exited %d, want 0 and both cells failing with their kinds:\n%s", code, out)
	}
	out, code = runBroken(t, dir, append([]string{"explore", "-variant", "broken-alloc", "-max-faults", "1", "-out", "repros"}, budget...)...)
	if code != 1 || !strings.Contains(out, "memory at ") || !strings.Contains(out, "replay:  ") || strings.Count(out, "\n") > 40 {
		t.Fatalf("explore exited %d, want 1 with the memory finding and its replay line:\n%s", code, out)
	}
	out, code = runBroken(t, dir, "sweep", "-variant", "broken-misuse", "-faults", "loss", "-n", "2", "-duration", "1m", "-out", "repros")
	files, _ := filepath.Glob(filepath.Join(dir, "repros", "broken-misuse-seed-*.json"))
	if code != 1 || len(files) == 0 {
		t.Fatalf("sweep exited %d and wrote %v, want 1 and a repro:\n%s", code, files, out)
	}
	out, code = runBroken(t, dir, append([]string{"minimize", files[0]}, budget...)...)
	if code != 1 || !strings.Contains(out, "minimize: MISUSE") || !strings.Contains(out, "lock called Server.ReadKey from a goroutine it started") ||
		!strings.Contains(out, "replay:  ") || strings.Contains(out, "sim.") {
		t.Fatalf("minimize exited %d, want 1 with the misuse finding and its replay line:\n%s", code, out)
	}
}
