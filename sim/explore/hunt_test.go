package explore

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
)

// long runs the slow searches: more seeds, and rapid's full shrink time.
var long = flag.Bool("long", false, "run long searches (more seeds, full shrinking)")

func TestMain(m *testing.M) {
	flag.Parse()
	// rapid keeps a fail file of each shrunk counterexample under
	// testdata/rapid (ignored by git): -rapid.failfile=FILE replays it in
	// the test that found it, beside the repro file the hunts log.
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

// hunt asserts that rapid finds a world and a plan, drawn as the target
// draws (its World fields; inside the envelope but for tg.Beyond), under
// which target shows a violation of kind, judged a bug (bug) or expected,
// and logs the shrunk world and plan, a timeline and the replay command.
func hunt(t *testing.T, tg Target, kind model.ViolationKind, bug bool) {
	t.Helper()
	// rapid draws a new seed per Check, and runs a fifth of its checks
	// under -short (20): the original's counterexample under crash was
	// missed once in about 100 short runs here. Up to five Checks make a
	// miss far rarer; a Check that finds one ends at once.
	rec := &recorder{name: t.Name()}
	for round := 0; round < 5 && !rec.failed; round++ {
		rec = &recorder{name: t.Name()}
		huntOnce(t, rec, tg, kind, bug)
	}
	if !rec.failed {
		standing := "expected (outside the envelope)"
		if bug {
			standing = "bug (inside the envelope)"
		}
		t.Fatalf("expected rapid to find a %s counterexample, a %s, for %s under %v; found none", kind, standing, tg.Variant.Name, tg.Classes)
	}
	t.Logf("counterexample found (as expected), shrunk by rapid:\n%s", strings.Join(rec.logs, "\n"))
}

// huntOnce is one rapid.Check of hunt's property, recorded in rec.
func huntOnce(t *testing.T, rec *recorder, tg Target, kind model.ViolationKind, bug bool) {
	t.Helper()
	defer func() {
		// rapid v1.3.0's shrinker can index past its list of draw groups
		// when a reordering it tried changes how many there are
		// (shrink.go, sortGroups). The counterexample was found before
		// shrinking began; only its shrinking is lost.
		if r := recover(); r != nil {
			if !rec.failed {
				panic(r)
			}
			t.Logf("counterexample found (as expected), but rapid's shrinker panicked: %v\n%s", r, strings.Join(rec.logs, "\n"))
		}
	}()
	rapid.Check(rec, func(rt *rapid.T) {
		seed := rapid.Uint64Range(1, 1000).Draw(rt, "seed")
		tg := tg
		if len(tg.World) > 0 {
			tg.Config, tg.World = envelope.WorldGen(tg.Config, tg.World).Draw(rt, "world"), nil
		}
		plan := faults.PlanGenWithin(tg.Classes, tg.Shape(), tg.Bounds()).Draw(rt, "plan")
		out, err := RunPlan(tg, seed, plan, Options{Check: model.DefaultCheckOptions(), Keep: true})
		if err != nil {
			rt.Fatalf("harness error: %v", err)
		}
		i := slices.IndexFunc(out.Findings, func(f Finding) bool { return f.Kind == kind && f.Bug() == bug })
		if i < 0 {
			return
		}
		v := out.Findings[i]
		var tl strings.Builder
		_ = reports.Timeline(&tl, out.History, out.Plan, out.Verdict, reports.TimelineOptions{Around: 10 * time.Second, MaxLines: 40})
		rt.Logf("timeline:\n%s", tl.String())
		rt.Logf("replay: %s", replayFile(tg, out))
		rt.Fatalf("%s (%s): %s %s", v.Kind, v.Standing(), v.Story, v.Note(tg.Variant.Name))
	})
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
// world and a plan that break it, and shrink them. Threads, pauses and
// crashes (in a world rapid shrinks to replication 1) break it inside the
// post's own assumptions (bugs); skew and jumps only once its shared clock
// is broken (expected: the assumption is the bug, reports/BUGS.md #2).
// Each draws the world its class draws by default.
func TestOriginalIsBrokenUnder(t *testing.T) {
	cases := []struct {
		class  faults.Class
		beyond []algorithm.Assumption
		kind   model.ViolationKind
	}{
		{faults.ClassThreads, nil, model.MutualExclusion},
		{faults.ClassSkew, []algorithm.Assumption{algorithm.ClockError}, model.MutualExclusion},
		{faults.ClassJump, []algorithm.Assumption{algorithm.ClockError}, model.MutualExclusion},
		{faults.ClassPause, nil, model.MutualExclusion},
		{faults.ClassCrash, nil, model.MutualExclusion},
	}
	for _, tc := range cases {
		t.Run(string(tc.class), func(t *testing.T) {
			classes := []faults.Class{tc.class}
			tg := Target{Variant: variant("original"), Config: huntConfig(), Classes: classes, Beyond: tc.beyond,
				World: envelope.DefaultWorld(classes)}
			hunt(t, tg, tc.kind, tc.beyond == nil)
		})
	}
}
