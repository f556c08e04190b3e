package cli

import (
	"bytes"
	"math/rand/v2"
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

// A sweep killed with SIGKILL at random moments, five times, each time run
// again with -resume, prints the JSON an uninterrupted sweep prints (no
// failure counted twice, none lost), and leaves no journal.
func TestKilledSweepResumesWithTheSameJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a sweep of thousands of seeds five times")
	}
	dir := t.TempDir()
	out, whole := filepath.Join(dir, "out"), filepath.Join(dir, "whole")
	args := []string{"sweep", "-variant", "original", "-faults", "threads", "-n", "12000", "-duration", "1m", "-keep-going", "-json", "-out", out}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("kill moments drawn from seed %d", seed)
	journal, kills := "", 0
	for ; kills < 5; kills++ {
		run := args
		if kills > 0 {
			run = append(run, "-resume")
		}
		before := checkpointsIn(journal)
		cmd := locksimCommand(run...)
		var said bytes.Buffer
		cmd.Stderr = &said
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// A random moment after the run has made some progress: past its
		// next checkpoint, then up to a second and a half more.
		journal = waitForCheckpoint(t, cmd, exited, &said, out, before)
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		select {
		case <-exited:
			// It finished before the kill, and took its journal with it.
			t.Fatalf("the sweep finished after %d kills: give it more seeds", kills)
		default:
		}
		cmd.Process.Kill()
		<-exited
		if bytes.Contains(readFile(journal), []byte(`"done":true`)) {
			break
		}
	}
	if kills < 5 {
		t.Fatalf("the sweep finished after %d kills: give it more seeds", kills)
	}
	resumed, err := locksimCommand(append(args, "-resume")...).Output()
	if code := exitCode(err); code != exitViolation {
		t.Fatalf("the resumed sweep exited %d (%v), want %d; it said:\n%s", code, err, exitViolation, stderrOf(err))
	}
	wholeArgs := append(args[:len(args)-1:len(args)-1], whole)
	uninterrupted, err := locksimCommand(wholeArgs...).Output()
	if code := exitCode(err); code != exitViolation {
		t.Fatalf("the uninterrupted sweep exited %d, want %d; it said:\n%s", code, exitViolation, stderrOf(err))
	}
	if got, want := string(resumed), strings.ReplaceAll(string(uninterrupted), whole, out); got != want {
		t.Fatalf("after %d kills the resumed sweep's JSON differs from the uninterrupted one's:\n%.600s\n...\nwant\n%.600s", kills, got, want)
	}
	if _, err := os.Stat(journal); err == nil {
		t.Fatal("the journal stayed behind after the resumed sweep ended")
	}
}

// waitForCheckpoint waits until the journal in dir holds more checkpoints
// than before, and returns its path; a sweep that exits first fails the
// test with what it said. A sweep checkpoints every second. (A wait of
// over a minute, seen twice, was a sweep that had already finished.)
func waitForCheckpoint(t *testing.T, cmd *exec.Cmd, exited <-chan error, said *bytes.Buffer, dir string, before int) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.journal")); len(m) == 1 && checkpointsIn(m[0]) > before {
			return m[0]
		}
		select {
		case err := <-exited:
			t.Fatalf("the sweep exited (%v) before a new checkpoint (%d before); it said:\n%s", err, before, said.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no new checkpoint in the journal after a minute")
		}
	}
}

// checkpointsIn counts the checkpoints in the journal at path ("": none).
func checkpointsIn(path string) int {
	if path == "" {
		return 0
	}
	return bytes.Count(readFile(path), []byte(`"checkpoint"`))
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// stderrOf is what a command that failed wrote to its standard error,
// when Output captured it.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
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
