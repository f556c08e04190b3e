package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An interrupted exploration stops in its level, says how far it got,
// and exits 130.
func TestInterruptedExploreSaysHowFarItGot(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts an exploration of 45,000 schedules")
	}
	outPath := filepath.Join(t.TempDir(), "stdout")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := locksimCommand("explore", "-variant", "corrected", "-max-faults", "2", "-parallel", "1")
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(string(readFile(outPath)), "k=1:"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no level 1 after a minute")
		}
	}
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	got := string(readFile(outPath))
	if code := exitCode(err); code != exitInterrupted {
		t.Fatalf("exited %d, want %d:\n%s", code, exitInterrupted, got)
	}
	if !strings.Contains(got, "explore: no violation in ") || !strings.Contains(got, "of the 45,055 with 2 faults, of the 2 asked for") || !strings.Contains(got, "; interrupted") {
		t.Fatalf("the interrupted exploration does not say how far it got:\n%s", got)
	}
}
