package outoftree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// examples/redislocks is a module of its own (redsync's and redislock's
// versions are its, not forced on locksim's users): go test ./... here runs
// its tests too, with -short, through this one.
func TestRedisLockExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests the examples/redislocks module")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-short", "./...")
	cmd.Dir = filepath.Join(root, "examples", "redislocks")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "dial tcp") || strings.Contains(string(out), "no required module") {
			t.Skipf("cannot fetch the examples' modules (%v):\n%s", err, out)
		}
		t.Fatalf("go test in examples/redislocks failed (%v):\n%s", err, out)
	}
	t.Logf("examples/redislocks:\n%s", out)
}
