package compare_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/compare"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

var updateCompare = flag.Bool("update-compare", false, "rewrite the compare goldens (testdata/compare-small.md; with -long, reports/VARIANTS.md)")

// Goldens: each file is exactly what its command writes, note included.
// VARIANTS.md takes about two minutes on two cores, so only -long checks it;
// the small golden runs the same code path on a smaller budget every time.
var (
	// The small golden names its variants, so that adding one to the
	// registry leaves it alone (VARIANTS.md shows them all).
	smallGolden = compareGolden{
		path:    "testdata/compare-small.md",
		command: seedrun.CommandPrefix + " compare -n 3 -costs 5 -exhaust 1 -variants original,corrected,fenced -duration 3m -md sim/compare/testdata/compare-small.md",
		opts: compare.CompareOptions{Seeds: 3, CostSeeds: 5, Exhaust: 1, Variants: variantList("original", "corrected", "fenced"),
			Config: withDuration(sim.DefaultConfig(), 3*time.Minute), Minimize: true},
	}
	variantsGolden = compareGolden{
		path:    "../../reports/VARIANTS.md",
		command: seedrun.CommandPrefix + " compare -n 200 -costs 200 -exhaust 2 -md reports/VARIANTS.md",
		opts:    compare.CompareOptions{Seeds: 200, CostSeeds: 200, Exhaust: 2, Config: sim.DefaultConfig(), Minimize: true, Variants: variants.All()},
	}
)

type compareGolden struct {
	path    string
	command string                 // the command that writes path, run from the module root
	opts    compare.CompareOptions // what that command asks Compare for
}

func withDuration(c sim.Config, d time.Duration) sim.Config {
	c.Duration = d
	return c
}

func (g compareGolden) check(t *testing.T) {
	t.Helper()
	m, err := compare.Compare(g.opts)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := compare.CompareMarkdown(&got, m, g.command); err != nil {
		t.Fatal(err)
	}
	// What follows RealLibrariesMarker is another sweep's (the real Redis
	// libraries', examples/redislocks TestVerdicts): kept as it is.
	old, _ := os.ReadFile(g.path)
	var tail []byte
	if i := bytes.Index(old, []byte(compare.RealLibrariesMarker)); i >= 0 {
		tail = old[i:]
	}
	if *updateCompare {
		if err := os.WriteFile(g.path, append(got.Bytes(), tail...), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatalf("%v; regenerate with: %s", err, g.command)
	}
	want = want[:len(want)-len(tail)]
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s is stale: the matrix it shows is not what locksim finds now.\nRegenerate it with: %s\n(or go test ./sim/compare -run %s -update-compare%s)\nfirst difference: %s",
			filepath.Base(g.path), g.command, t.Name(), map[bool]string{true: " -long", false: ""}[g.path == variantsGolden.path],
			firstDiff(string(want), got.String()))
	}
}

// firstDiff names the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n  committed: " + a + "\n  now:       " + b
		}
	}
	return "none"
}

func TestCompareSmallGolden(t *testing.T) { smallGolden.check(t) }

// TestVariantsGolden fails when reports/VARIANTS.md is stale. It reruns the
// committed command's whole budget, so only with -long.
func TestVariantsGolden(t *testing.T) {
	if !*long {
		t.Skipf("regenerating reports/VARIANTS.md takes minutes; run with -long (TestCompareSmallGolden covers the code path)")
	}
	variantsGolden.check(t)
}

// The same options give the same matrix, to the last float, whatever the
// parallelism: sweeps report in seed order and minimisation is sequential.
func TestCompareSameWhateverParallel(t *testing.T) {
	opts := compare.CompareOptions{
		Variants: variantList("original", "corrected"),
		Classes:  []faults.Class{faults.ClassNone, faults.ClassSkew, faults.ClassThreads},
		Seeds:    4, Config: withDuration(sim.DefaultConfig(), 2*time.Minute), Minimize: true,
	}
	var ms []reports.Matrix
	for _, p := range []int{1, 2, 3} {
		opts.Parallel = p
		m, err := compare.Compare(opts)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for i := 1; i < len(ms); i++ {
		if !reflect.DeepEqual(ms[0], ms[i]) {
			t.Fatalf("parallel %d gave another matrix than parallel 1:\n%+v\n%+v", i+1, ms[0], ms[i])
		}
	}
}

// Every cell comes to OnCell in matrix order, and a failing cell carries
// its first counterexample: the seed the cell names, its replay command,
// and a minimal plan no larger than the one the seed drew.
func TestCompareCells(t *testing.T) {
	opts := compare.CompareOptions{
		Variants: variantList("original", "fenced"),
		Classes:  []faults.Class{faults.ClassNone, faults.ClassThreads},
		Seeds:    3, Config: withDuration(sim.DefaultConfig(), 2*time.Minute), Minimize: true,
	}
	var seen []string
	failing := 0
	opts.OnCell = func(r compare.CellResult) {
		seen = append(seen, r.Variant+"×"+string(r.Cell.Class))
		c := r.Cell
		if c.Seeds != opts.Seeds {
			t.Errorf("%s × %s: %d seeds run, want %d", r.Variant, c.Class, c.Seeds, opts.Seeds)
		}
		if r.First == nil {
			if c.Violations != 0 || c.FirstSeed != -1 || c.Replay != "" || r.Minimal != nil {
				t.Errorf("%s × %s: no first counterexample but the cell says %+v", r.Variant, c.Class, c)
			}
			return
		}
		failing++
		if int64(r.First.Seed) != c.FirstSeed || r.First.History.End == 0 {
			t.Errorf("%s × %s: first outcome seed %d (history end %d), cell says %d", r.Variant, c.Class, r.First.Seed, r.First.History.End, c.FirstSeed)
		}
		if want := seedrun.ReplayCommand(r.Target, r.First.Seed); c.Replay != want {
			t.Errorf("replay %q, want %q", c.Replay, want)
		}
		if r.Minimal == nil || c.MinimalSize != r.Minimal.SizeAfter || c.MinimalSize > r.First.Plan.Size() {
			t.Errorf("%s × %s: minimal size %d, plan size %d, minimal %v", r.Variant, c.Class, c.MinimalSize, r.First.Plan.Size(), r.Minimal)
		}
	}
	m, err := compare.Compare(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"original×none", "original×threads", "fenced×none", "fenced×threads"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("OnCell order %v, want %v", seen, want)
	}
	if failing == 0 {
		t.Errorf("original × threads found nothing in %d seeds: the test no longer exercises a failing cell", opts.Seeds)
	}
	for _, r := range m.Rows {
		x := r.Metrics
		if x.GrantsPerMinute <= 0 || x.AcquireP50ms <= 0 || x.AcquireP99ms < x.AcquireP50ms || x.Availability <= 0 || x.Availability > 1 || x.MessagesPerGrant <= 0 {
			t.Errorf("%s: implausible metrics %+v", r.Variant, x)
		}
	}
}

func TestCompareRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]compare.CompareOptions{
		"no seeds":         {Config: sim.DefaultConfig(), Variants: variants.All()},
		"no variants":      {Seeds: 1, Config: sim.DefaultConfig()},
		"unknown variant":  {Seeds: 1, Config: sim.DefaultConfig(), Variants: []algorithm.Variant{{Name: "nope"}}},
		"bad config":       {Seeds: 1, Config: sim.Config{}},
		"negative workers": {Seeds: 1, Config: sim.DefaultConfig(), Parallel: -1},
	} {
		if _, err := compare.Compare(opts); err == nil {
			t.Errorf("%s: Compare accepted %+v", name, opts)
		}
	}
}
