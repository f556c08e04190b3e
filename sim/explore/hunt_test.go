package explore

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"locksim/faults"
	"locksim/model"
	"locksim/reports"
	"locksim/sim"
)

// long runs the slow searches: more seeds, and rapid's full shrink time.
var long = flag.Bool("long", false, "run long searches (more seeds, full shrinking)")

func TestMain(m *testing.M) {
	flag.Parse()
	// rapid's fail files would land inside the package; the hunt tests log
	// a repro file and its replay command instead.
	_ = flag.Set("rapid.nofailfile", "true")
	if !*long {
		// rapid shrinks for up to 30s by default; a few seconds already
		// reach a small plan, and go test ./... must stay under two minutes.
		_ = flag.Set("rapid.shrinktime", "3s")
	}
	os.Exit(m.Run())
}

// recorder is a rapid.TB that remembers a failure instead of failing the Go
// test: the hunt tests expect the original to be broken, so a failing
// property is what they assert.
type recorder struct {
	name   string
	failed bool
	logs   []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Log(args ...any)                  { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recorder) Skipf(format string, args ...any) {}
func (r *recorder) Skip(args ...any)                 {}
func (r *recorder) SkipNow()                         {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}
func (r *recorder) Error(args ...any)                 { r.failed = true; r.Log(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...) }
func (r *recorder) FailNow()                          { r.failed = true }
func (r *recorder) Fail()                             { r.failed = true }
func (r *recorder) Failed() bool                      { return r.failed }

// huntConfig is the default world, shorter, so rapid's shrinking is quick.
func huntConfig() sim.Config {
	c := sim.DefaultConfig()
	c.Duration = 4 * time.Minute
	return c
}

// hunt asserts that rapid finds a plan under which target shows a violation
// of kind, and logs the shrunk plan, a timeline and the replay command.
func hunt(t *testing.T, tg Target, kind model.ViolationKind) {
	t.Helper()
	rec := &recorder{name: t.Name()}
	shape := tg.Shape()
	rapid.Check(rec, func(rt *rapid.T) {
		seed := rapid.Uint64Range(1, 1000).Draw(rt, "seed")
		plan := faults.PlanGen(tg.Classes, shape).Draw(rt, "plan")
		out, err := RunPlan(tg, seed, plan, Options{Check: model.DefaultCheckOptions(), Keep: true})
		if err != nil {
			rt.Fatalf("harness error: %v", err)
		}
		v, found := out.Verdict.First(kind)
		if !found {
			return
		}
		var tl strings.Builder
		_ = reports.Timeline(&tl, out.History, out.Plan, out.Verdict, reports.TimelineOptions{Around: int64(10 * time.Second), MaxLines: 40})
		rt.Logf("timeline:\n%s", tl.String())
		rt.Logf("replay: %s", replayFile(tg, out))
		rt.Fatalf("%s: %s", v.Kind, v.Story)
	})
	if !rec.failed {
		t.Fatalf("expected rapid to find a %s counterexample for %s under %v; found none", kind, tg.Variant.Name, tg.Classes)
	}
	t.Logf("counterexample found (as expected), shrunk by rapid:\n%s", strings.Join(rec.logs, "\n"))
}

// replayFile writes the outcome as a repro file in the temp dir and returns
// the command that replays it.
func replayFile(tg Target, out Outcome) string {
	dir := filepath.Join(os.TempDir(), "locksim-hunt")
	path, err := WriteRepro(dir, NewRepro(tg, out))
	if err != nil {
		return "(could not write repro: " + err.Error() + ")"
	}
	return ReplayFileCommand(path)
}

// The original under each fault class that breaks it: rapid must find a
// counterexample, and shrink it.
func TestOriginalIsBrokenUnder(t *testing.T) {
	cases := []struct {
		class  faults.Class
		config func(*sim.Config)
		kind   model.ViolationKind
	}{
		{faults.ClassThreads, nil, model.MutualExclusion},
		{faults.ClassSkew, nil, model.MutualExclusion},
		{faults.ClassJump, nil, model.MutualExclusion},
		{faults.ClassPause, nil, model.MutualExclusion},
		{faults.ClassCrash, func(c *sim.Config) { c.Replication = 1; c.Nodes = 1 }, model.MutualExclusion},
	}
	for _, tc := range cases {
		t.Run(string(tc.class), func(t *testing.T) {
			cfg := huntConfig()
			if tc.config != nil {
				tc.config(&cfg)
			}
			hunt(t, Target{Variant: variant("original"), Config: cfg, Classes: []faults.Class{tc.class}}, tc.kind)
		})
	}
}
