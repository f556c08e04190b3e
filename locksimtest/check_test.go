package locksimtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locksim/locksim/variants"
)

// A clean lock passes Check: corrected inside its envelope.
func TestCheckPassesACleanLock(t *testing.T) {
	v, err := variants.Lookup("corrected")
	if err != nil {
		t.Fatal(err)
	}
	Check(t, v, Seeds(200))
}

// A clean lock passes Explore: corrected has no violation in any schedule
// of the small world with one fault inside its envelope.
func TestExplorePassesACleanLock(t *testing.T) {
	v, err := variants.Lookup("corrected")
	if err != nil {
		t.Fatal(err)
	}
	Explore(t, v, 1)
}

// brokenEnv, when set, makes TestBrokenLockFails check the original, a
// broken lock; TestFailuresAreKeptAndReplayedFirst runs it in a process
// of its own, in a directory of its own.
const brokenEnv = "LOCKSIMTEST_BROKEN"

func TestBrokenLockFails(t *testing.T) {
	if os.Getenv(brokenEnv) == "" {
		t.Skip("run by TestFailuresAreKeptAndReplayedFirst")
	}
	v, err := variants.Lookup("original")
	if err != nil {
		t.Fatal(err)
	}
	Check(t, v, Seeds(50), InProcess())
}

// A failure Check finds is minimised, kept under testdata/locksim/<test>/,
// and its printed replay line works as printed; the next go test replays
// it first and fails on it again, without sweeping.
func TestFailuresAreKeptAndReplayedFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary three times")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestBrokenLockFails$", "-test.v"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), brokenEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the broken lock passed:\n%s", out)
		}
		return string(out)
	}
	first := run()
	kept, _ := filepath.Glob(filepath.Join(dir, "testdata", "locksim", "TestBrokenLockFails", "*.json"))
	if len(kept) != 1 || !strings.HasSuffix(kept[0], "-min.json") {
		t.Fatalf("want one minimised failure kept, got %v:\n%s", kept, first)
	}
	line := regexp.MustCompile(`-locksim\.replay=(\S+)`).FindStringSubmatch(first)
	if line == nil || filepath.Join(dir, line[1]) != kept[0] {
		t.Fatalf("the replay line does not name the kept file %s:\n%s", kept[0], first)
	}
	if out := run("-locksim.replay="+line[1], "-locksim.trace", "-locksim.html=page.html"); !strings.Contains(out, "has a bug (replay of "+line[1]) ||
		!strings.Contains(out, "timeline:") || !strings.Contains(out, "html:     page.html") {
		t.Fatalf("the printed replay line does not replay the failure, with its whole timeline and page:\n%s", out)
	}
	for _, name := range []string{"page.html", "page-porcupine.html"} {
		if page, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !strings.Contains(string(page), "mutual-exclusion") {
			t.Fatalf("-locksim.html wrote no %s of the failure (%v)", name, err)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+world: nodes `).MatchString(first) || !regexp.MustCompile(`(?m)^\s+plan:  `).MatchString(first) {
		t.Fatalf("the failure does not say its world and plan:\n%s", first)
	}
	again := run()
	if !strings.Contains(again, "a failure kept by an earlier run, "+line[1]+", fails again") {
		t.Fatalf("the next run did not replay the kept failure first:\n%s", again)
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "testdata", "locksim", "TestBrokenLockFails", "*.json")); len(n) != 1 {
		t.Fatalf("replaying a kept failure wrote another file: %v", n)
	}
}
