//go:build unix

package isolate_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/sweep"
)

// Environment of TestSupervisorOfASpinningWorker: the directory its
// worker writes its process ID into, and whether Linux's parent-death
// signal is off (the lifeline pipe alone ends the worker then).
const (
	superviseEnv   = "LOCKSIM_TEST_SUPERVISE"
	noPdeathsigEnv = "LOCKSIM_TEST_NO_PDEATHSIG"
)

// spinningVariant is corrected whose h0/t0, in its first Acquire, writes
// its process's ID into dir and spins for good.
func spinningVariant(dir string) algorithm.Variant {
	v := brokenVariant("spin", 1)
	v.Name, v.Summary = "spins-for-good", "corrected whose h0/t0 spins in its first Acquire, saying where"
	v.New = func() algorithm.Lock {
		return &broken{base: variant("corrected").New(), oneIn: 1, mistake: func(algorithm.Env, string) {
			os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), nil, 0o644)
			for {
			}
		}}
	}
	return v
}

// TestSupervisorOfASpinningWorker is a sweep whose worker spins for good,
// in a process TestWorkersDieWithTheirSupervisor kills.
func TestSupervisorOfASpinningWorker(t *testing.T) {
	dir := os.Getenv(superviseEnv)
	if dir == "" {
		t.Skip("run by TestWorkersDieWithTheirSupervisor")
	}
	if os.Getenv(noPdeathsigEnv) != "" {
		isolate.SetPdeathsig(false)
	}
	iso := isolate.Isolation{Command: isolate.TestWorkerCommand(t.Name()), HangAfter: time.Hour}
	_, err := sweep.Sweep(brokenTarget(spinningVariant(dir)), sweep.SweepOptions{From: 1, Count: 1, Isolate: &iso})
	t.Fatalf("the sweep ended (%v): it spins until it is killed", err)
}

// A worker spinning in a seed dies with its supervisor, however the
// supervisor ends (kill -9, a hangup), within a second or two: by Linux's
// parent-death signal, and by the pipe whose end tells the worker its
// supervisor is gone (alone, with the signal off, and on every Unix).
func TestWorkersDieWithTheirSupervisor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a supervisor and its worker, and kills the supervisor")
	}
	for _, tc := range []struct {
		name        string
		sig         syscall.Signal
		noPdeathsig bool
	}{
		{"kill-9", syscall.SIGKILL, false},
		{"hangup", syscall.SIGHUP, false},
		{"kill-9-lifeline-only", syscall.SIGKILL, true},
		{"hangup-lifeline-only", syscall.SIGHUP, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSupervisorOfASpinningWorker$", "-test.count=1")
			cmd.Env = append(os.Environ(), superviseEnv+"="+dir)
			if tc.noPdeathsig {
				cmd.Env = append(cmd.Env, noPdeathsigEnv+"=1")
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			pid := spinningWorker(t, dir)
			defer syscall.Kill(pid, syscall.SIGKILL) // if the test fails: not left spinning
			cmd.Process.Signal(tc.sig)
			cmd.Wait()
			start := time.Now()
			for !processGone(pid) {
				if time.Since(start) > 3*time.Second {
					t.Fatalf("worker %d still runs %s after its supervisor died of %s", pid, time.Since(start).Round(time.Millisecond), tc.sig)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("worker %d gone %s after its supervisor died of %s", pid, time.Since(start).Round(time.Millisecond), tc.sig)
		})
	}
}

// spinningWorker is the process ID the supervisor's worker wrote into dir
// once it began to spin.
func spinningWorker(t *testing.T, dir string) int {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if names, _ := os.ReadDir(dir); len(names) > 0 {
			pid, err := strconv.Atoi(names[0].Name())
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the supervisor's worker never began to spin")
	return 0
}

// processGone reports whether process pid has ended: it is no more, or a
// zombie that nobody reaped yet (its parent died; init may be slow).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) && runtimeHasProc()
	}
	// pid (comm) state ...: the state follows the last parenthesis.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// runtimeHasProc: this system has /proc (Linux); elsewhere kill(pid, 0)
// alone says.
func runtimeHasProc() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}
