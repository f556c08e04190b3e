package redislocks

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/explore"
)

var (
	verdictSeeds   = flag.Int("verdict-seeds", 300, "seeds per lock and fault class in TestVerdicts")
	verdictAll     = flag.Int("verdict-all-seeds", 10_000, "seeds per lock under class all in TestVerdicts")
	verdictOut     = flag.String("verdict-out", "", "TestVerdicts writes its Markdown table here too")
	verdictClasses = []string{"none", "loss", "ambiguous", "crash", "amnesia", "partition", "skew", "jump", "pause", "threads"}
)

// TestVerdicts is the sweep behind the reference locks' verdicts in
// reports/VARIANTS.md (-long): every lock under every class this mode
// draws, inside its envelope, and under class all at length. Each cell is
// bugs / seeds, with the first failing seed and what broke.
func TestVerdicts(t *testing.T) {
	if !*long {
		t.Skip("the verdicts' sweep: go test -long -run TestVerdicts (about an hour on two cores)")
	}
	targets := referenceTargets(t)
	var b strings.Builder
	fmt.Fprintf(&b, "| lock | %s | all |\n|---|%s---|\n", strings.Join(verdictClasses, " | "), strings.Repeat("---|", len(verdictClasses)))
	for _, name := range []string{"naive", "redislock", "redsync-3", "redsync-5"} {
		fmt.Fprintf(&b, "| %s |", name)
		for _, class := range append(append([]string(nil), verdictClasses...), "all") {
			target := targets[name]
			cs, err := faults.ParseClasses(class)
			if err != nil {
				t.Fatal(err)
			}
			target.Classes = cs
			n := *verdictSeeds
			if class == "all" {
				n = *verdictAll
			}
			res, err := explore.Sweep(target, explore.SweepOptions{From: 1, Count: n, KeepGoing: true, KeepFailures: 1})
			if err != nil {
				t.Fatal(err)
			}
			cell := fmt.Sprintf(" 0/%d", res.Runs)
			if res.Failed > 0 {
				f := res.Failures[0]
				kinds := map[model.ViolationKind]bool{}
				var ks []string
				for _, x := range f.Findings {
					if x.Bug() && !kinds[x.Kind] {
						kinds[x.Kind] = true
						ks = append(ks, string(x.Kind))
					}
				}
				cell = fmt.Sprintf(" **%d**/%d (seed %d: %s)", res.Failed, res.Runs, f.Seed, strings.Join(ks, ", "))
			}
			b.WriteString(cell + " |")
			t.Logf("%s %s: %d of %d seeds fail, %d expected, %d inside", name, class, res.Failed, res.Runs, res.Expected, res.Inside)
		}
		b.WriteString("\n")
	}
	t.Logf("verdicts:\n%s", b.String())
	if *verdictOut != "" {
		if err := os.WriteFile(*verdictOut, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
