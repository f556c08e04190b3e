// Package arch386 builds a package's tests for GOARCH=386 and runs them,
// for the tests that check a seed runs the same on a 32-bit machine (other
// int and word sizes) as on this one.
package arch386

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestBinary builds the tests of the package in the current directory
// (where go test runs a package's tests) for GOARCH=386 and returns the
// binary's path. It skips t under -short, on a 386 build, and where there
// is no go command to build with.
func TestBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds this package's tests for GOARCH=386")
	}
	if runtime.GOARCH == "386" {
		t.Skip("this is the 386 build")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the 386 binary with")
	}
	bin := filepath.Join(t.TempDir(), "pkg386.test")
	build := exec.Command(gotool, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=386", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=386 go test -c: %v\n%s", err, out)
	}
	return bin
}

// Run runs the 386 test binary bin with args and env added to this
// process's environment, and returns what it printed and how it exited.
// It skips t where this machine cannot run a 386 binary.
func Run(t testing.TB, bin string, env []string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Skipf("this machine cannot run a 386 binary: %v", err)
	}
	return out, err
}
