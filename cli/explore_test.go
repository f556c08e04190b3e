package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
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

// A hang found by explore is printed as a bug of the variant with its
// repro and replay line, exit 1.
func TestExploreReportsAHang(t *testing.T) {
	v, err := variants.Lookup("corrected")
	if err != nil {
		t.Fatal(err)
	}
	tg := explore.Target{Variant: v, Config: explore.SmallWorld(3, 2, 1), Plan: new(faults.Plan)}
	s := explore.Schedule{Menu: explore.MenuFor(tg), Deviations: []explore.Deviation{{Pos: 2, Alt: 1}}}
	verdict := model.Verdict{Violations: []model.Violation{{Kind: model.Hang, Clients: []int{}, Story: "did not finish"}}}
	o := explore.Outcome{Verdict: verdict, Findings: explore.Classify(v.Envelope, verdict, nil, 0), Schedule: &s, Config: tg.Config}
	var stdout, stderr strings.Builder
	dir := t.TempDir()
	f := newFlags("explore", "", "")
	code := reportHang(&stdout, &stderr, f, tg, dir, &explore.HangError{Outcome: o, After: time.Second})
	if code != exitViolation || !strings.Contains(stdout.String(), "explore: HANG, a bug of corrected") || !strings.Contains(stdout.String(), "locksim replay "+dir) {
		t.Fatalf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(m) != 1 {
		t.Fatalf("repros written: %v", m)
	}
}
