package isolate_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// checkHelperEnv makes TestCheckHelper run locksimtest.Check on the broken
// variants: a test of its own, in a process of its own, which fails.
const checkHelperEnv = "LOCKSIM_TEST_CHECK_BROKEN"

// locksimtest.Check contains every broken variant (isolate_test.go's) too:
// the test it runs in fails with the finding of the variant's kind, after
// its seeds ran in worker processes, and nothing of it took the test
// binary down.
func TestCheckContainsBrokenVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs locksimtest.Check in processes of its own, which start workers")
	}
	for _, name := range BrokenCaseNames() {
		t.Run(name, func(t *testing.T) {
			_, kind := BrokenVariantForTest(name, 4)
			if kind == model.Misuse && RaceEnabledForTest() {
				t.Skip("the race detector reports the misuse itself")
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestCheckHelper$/^"+name+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), checkHelperEnv+"=1")
			cmd.Dir = t.TempDir() // where Check keeps its repros
			out, err := cmd.CombinedOutput()
			report := string(out)
			if _, failed := err.(*exec.ExitError); !failed || !strings.Contains(report, "has a bug") {
				t.Fatalf("Check of broken-%s: %v, want a failed test with the bug:\n%s", name, err, report)
			}
			if !regexp.MustCompile(`\n\s+` + string(kind) + ` at `).MatchString(report) {
				t.Fatalf("Check of broken-%s does not report a %s finding:\n%s", name, kind, report)
			}
			if strings.Contains(report, "(sim.") || strings.Contains(report, "killedSignal") {
				t.Fatalf("Check of broken-%s shows the simulator's insides:\n%s", name, report)
			}
		})
	}
}

// TestCheckHelper is locksimtest.Check of one broken variant, when
// TestCheckContainsBrokenVariants runs it.
func TestCheckHelper(t *testing.T) {
	if os.Getenv(checkHelperEnv) == "" {
		t.Skip("run by TestCheckContainsBrokenVariants")
	}
	cfg := sim.DefaultConfig()
	cfg.Duration = 2 * time.Minute
	for _, name := range BrokenCaseNames() {
		t.Run(name, func(t *testing.T) {
			v, _ := BrokenVariantForTest(name, 4)
			locksimtest.Check(t, v, locksimtest.Faults(string(faults.ClassLoss)), locksimtest.Seeds(12), locksimtest.Config(cfg),
				locksimtest.HangAfter(HangBudgetForTest(name)), locksimtest.MemoryLimit(256<<20))
		})
	}
}
