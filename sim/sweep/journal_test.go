package sweep_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// journalSweep is the sweep the kill-and-resume test kills: the original,
// which fails most seeds, kept going over enough seeds to take seconds.
func journalSweep(path string, resume bool) (seedrun.Target, sweep.SweepOptions) {
	t := seedrun.DefaultTarget(variant("original"), faults.ClassAll)
	t.Config.Duration = 2 * time.Minute
	return t, sweep.SweepOptions{From: 1, Count: 6000, KeepGoing: true, Journal: path, Resume: resume}
}

const journalChildEnv = "LOCKSIM_TEST_JOURNAL_CHILD"

// A sweep killed with SIGKILL in the middle resumes from its journal to
// the result of an uninterrupted sweep: the same counts, the same failures,
// delivered to OnOutcome in the same order.
func TestKilledSweepResumesToTheSameResult(t *testing.T) {
	if path := os.Getenv(journalChildEnv); path != "" {
		tg, o := journalSweep(path, false)
		sweep.Sweep(tg, o) // killed by the parent long before it ends
		return
	}
	if testing.Short() {
		t.Skip("kills a sweep of thousands of seeds in a child process")
	}
	path := filepath.Join(t.TempDir(), "sweep.journal")
	child := exec.Command(isolate.TestWorkerCommand(t.Name())[0], isolate.TestWorkerCommand(t.Name())[1:]...)
	child.Env = append(os.Environ(), journalChildEnv+"="+path)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for checkpoints(path) < 2 {
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("the child wrote no checkpoints in a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Process.Kill() // SIGKILL: no deferred write, no flush
	child.Wait()
	cut := checkpoints(path)
	if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(`"done":true`)) {
		t.Fatal("the child finished its sweep before it was killed: give it more seeds")
	}

	var resumedSeeds, wholeSeeds []uint64
	tg, o := journalSweep(path, true)
	o.OnOutcome = func(out seedrun.Outcome) {
		if out.Failed() {
			resumedSeeds = append(resumedSeeds, out.Seed)
		}
	}
	got, err := sweep.Sweep(tg, o)
	if err != nil {
		t.Fatal(err)
	}
	tg, o = journalSweep(filepath.Join(t.TempDir(), "whole.journal"), false)
	o.OnOutcome = func(out seedrun.Outcome) {
		if out.Failed() {
			wholeSeeds = append(wholeSeeds, out.Seed)
		}
	}
	want, err := sweep.Sweep(tg, o)
	if err != nil {
		t.Fatal(err)
	}
	if got.Runs != o.Count || !reflect.DeepEqual(counts(got), counts(want)) {
		t.Fatalf("resumed after %d checkpoints: %+v\nuninterrupted: %+v", cut, counts(got), counts(want))
	}
	if !reflect.DeepEqual(resumedSeeds, wholeSeeds) {
		t.Fatalf("resumed sweep delivered %d failing seeds, the uninterrupted one %d", len(resumedSeeds), len(wholeSeeds))
	}
	for i := range want.Failures {
		a, _ := json.Marshal(got.Failures[i].Findings)
		b, _ := json.Marshal(want.Failures[i].Findings)
		if got.Failures[i].Seed != want.Failures[i].Seed || !bytes.Equal(a, b) || got.Failures[i].Hash != want.Failures[i].Hash {
			t.Fatalf("kept failure %d: seed %d, want seed %d with the same findings and hash", i, got.Failures[i].Seed, want.Failures[i].Seed)
		}
	}
	// Resuming a finished sweep gives its result again, running nothing.
	tg, o = journalSweep(path, true)
	again, err := sweep.Sweep(tg, o)
	if err != nil || !reflect.DeepEqual(counts(again), counts(want)) {
		t.Fatalf("resuming the finished sweep: %+v, %v", counts(again), err)
	}
}

// counts is a result without its kept outcomes.
func counts(r sweep.SweepResult) sweep.SweepResult {
	r.Failures = nil
	return r
}

func checkpoints(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte(`"checkpoint"`))
}

// A journal is only resumed by the sweep it is of.
func TestJournalOfAnotherSweepIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	tg, o := journalSweep(path, false)
	o.Count = 20
	if _, err := sweep.Sweep(tg, o); err != nil {
		t.Fatal(err)
	}
	o.Count, o.Resume = 30, true
	if _, err := sweep.Sweep(tg, o); err == nil {
		t.Fatal("a sweep of 30 seeds resumed the journal of a sweep of 20")
	}
	o.Journal = filepath.Join(t.TempDir(), "none")
	if _, err := sweep.Sweep(tg, o); err == nil {
		t.Fatal("resumed a journal that does not exist")
	}
}

// A journal whose checkpoint cannot be the sweep's is refused with a
// sentence, not resumed to impossible counts; one that holds a failure
// twice (written by a killed run and again by the run that resumed it,
// as locksim did before resumes cut the journal) counts it once.
func TestDamagedJournalIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	tg, o := journalSweep(path, false)
	o.Count = 20
	want, err := sweep.Sweep(tg, o)
	if err != nil || want.Failed == 0 {
		t.Fatalf("the sweep to journal: %+v, %v", counts(want), err)
	}
	good := readJournalBytes(t, path)
	lines := bytes.Split(bytes.TrimSuffix(good, []byte("\n")), []byte("\n"))
	last := lines[len(lines)-1] // the final checkpoint
	for _, c := range []struct{ from, to string }{
		{`"next":20`, `"next":-50`},
		{`"next":20`, `"next":99999999`},
		{`"Runs":20`, `"Runs":19`},
		{fmt.Sprintf(`"Failed":%d`, want.Failed), fmt.Sprintf(`"Failed":%d`, want.Failed+1)},
	} {
		bad := bytes.Replace(last, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, last) {
			t.Fatalf("the checkpoint has no %s: %s", c.from, last)
		}
		// Undone, so that the resume reads it rather than returning at once.
		bad = bytes.Replace(bad, []byte(`"done":true,`), nil, 1)
		damaged := append(bytes.Join(lines[:len(lines)-1], []byte("\n")), '\n')
		os.WriteFile(path, append(append(damaged, bad...), '\n'), 0o644)
		o.Resume = true
		if _, err := sweep.Sweep(tg, o); err == nil || !strings.Contains(err.Error(), "the journal is damaged") {
			t.Errorf("a checkpoint with %s resumed (%v)", c.to, err)
		}
	}
	// Every failure line written twice before the last checkpoint.
	var doubled [][]byte
	for _, l := range lines {
		doubled = append(doubled, l)
		if bytes.Contains(l, []byte(`"failure"`)) {
			doubled = append(doubled, l)
		}
	}
	os.WriteFile(path, append(bytes.Join(doubled, []byte("\n")), '\n'), 0o644)
	got, err := sweep.Sweep(tg, o)
	if err != nil || !reflect.DeepEqual(counts(got), counts(want)) || len(got.Failures) != len(want.Failures) {
		t.Fatalf("a journal with every failure twice resumed to %+v (%d kept), %v; want %+v (%d kept)", counts(got), len(got.Failures), err, counts(want), len(want.Failures))
	}
}

func readJournalBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
