package explore

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// instructionCeiling is the most instructions a fault-free run of the
// default scenario may cost (BenchmarkDefaultScenario/sim-only-fault-free,
// counted by callgrind as docs/PERFORMANCE.md does): the last measurement
// (20.61 M on 2026-12-05, Go 1.26.8) and 4% for a toolchain's drift. Lower
// it with each measured gain; issue 26's target is 13.8 M.
const instructionCeiling = 21_500_000

// TestInstructionCeiling (-long, with valgrind) counts the instructions of
// a fault-free run of the default scenario, as (13 runs − 3 runs) / 10 of
// this test binary's own benchmark under callgrind with GOGC=off, and
// fails when they pass the recorded ceiling: a benchmark's figure that
// goes stale is caught when the regression lands.
func TestInstructionCeiling(t *testing.T) {
	if !*long {
		t.Skip("-long counts instructions under callgrind (about two minutes)")
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation is not the kernel's cost")
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		t.Skip("valgrind is not installed (Debian's valgrind package): the instruction count needs callgrind")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	count := func(runs int) int64 {
		cmd := exec.Command(valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", self,
			"-test.run", "XXX", "-test.bench", "DefaultScenario$/sim-only-fault-free", "-test.benchtime", fmt.Sprintf("%dx", runs))
		cmd.Env = append(os.Environ(), "GOGC=off", "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("callgrind, %d runs: %v\n%s", runs, err, out)
		}
		m := regexp.MustCompile(`I\s+refs:\s+([\d,]+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("callgrind, %d runs: no instruction count in:\n%s", runs, out)
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	perRun := (count(13) - count(3)) / 10
	t.Logf("a fault-free run of the default scenario: %.2f M instructions (ceiling %.2f M)", float64(perRun)/1e6, float64(instructionCeiling)/1e6)
	if perRun > instructionCeiling {
		t.Fatalf("a fault-free run costs %d instructions, above the recorded ceiling of %d: find the regression (docs/PERFORMANCE.md, Reproducing a profile), or measure and record a new ceiling with why", perRun, instructionCeiling)
	}
}
