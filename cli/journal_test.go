package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// locksimCommand is this test binary started as the locksim command.
func locksimCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asLocksimEnv+"=1")
	return cmd
}

// A sweep killed with SIGKILL in the middle, then run again with -resume,
// prints the JSON an uninterrupted sweep prints, and leaves no journal.
func TestKilledSweepResumesWithTheSameJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a sweep of thousands of seeds")
	}
	dir := t.TempDir()
	out, whole := filepath.Join(dir, "out"), filepath.Join(dir, "whole")
	args := []string{"sweep", "-variant", "original", "-faults", "threads", "-n", "3000", "-duration", "1m", "-keep-going", "-json"}
	killed := locksimCommand(append(args, "-out", out)...)
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	journal := ""
	for deadline := time.Now().Add(time.Minute); journal == "" || !bytes.Contains(readFile(journal), []byte(`"checkpoint"`)); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			killed.Process.Kill()
			t.Fatal("no checkpoint in the journal after a minute")
		}
		if m, _ := filepath.Glob(filepath.Join(out, "*.journal")); len(m) == 1 {
			journal = m[0]
		}
	}
	killed.Process.Kill()
	killed.Wait()
	if bytes.Contains(readFile(journal), []byte(`"done":true`)) {
		t.Fatal("the sweep finished before it was killed: give it more seeds")
	}
	resumed, err := locksimCommand(append(args, "-out", out, "-resume")...).Output()
	if code := exitCode(err); code != exitViolation {
		t.Fatalf("the resumed sweep exited %d (%v), want %d", code, err, exitViolation)
	}
	uninterrupted, err := locksimCommand(append(args, "-out", whole)...).Output()
	if code := exitCode(err); code != exitViolation {
		t.Fatalf("the uninterrupted sweep exited %d, want %d", code, exitViolation)
	}
	if got, want := string(resumed), strings.ReplaceAll(string(uninterrupted), whole, out); got != want {
		t.Fatalf("the resumed sweep's JSON differs from the uninterrupted one's:\n%.600s\n...\nwant\n%.600s", got, want)
	}
	if _, err := os.Stat(journal); err == nil {
		t.Fatal("the journal stayed behind after the resumed sweep ended")
	}
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
