package exhaust_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/exhaust"
	"github.com/locksim/locksim/sim/repro"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// corrected and fenced get bounded results inside their envelopes: no
// violation in any schedule with up to one fault of every kind their
// envelopes allow, in the small world; two with -long (about 105,000
// schedules; VARIANTS.md holds the same bound, and BenchmarkExhaust).
func TestExhaustBoundsTheCorrectedVariants(t *testing.T) {
	k := 1
	if *long {
		k = 2
	}
	for _, name := range []string{"corrected", "fenced"} {
		t.Run(name, func(t *testing.T) {
			res, err := exhaust.Exhaust(seedrun.Target{Variant: variant(name), Config: exhaust.SmallWorld(3, 2, 1)}, exhaust.ExhaustOptions{MaxFaults: k})
			if err != nil {
				t.Fatal(err)
			}
			if res.Counterexample != nil || !res.Complete {
				t.Fatalf("want a bounded result: %s", res)
			}
			if res.Schedules() < 100 {
				t.Fatalf("only %d schedules: the menu offers next to nothing", res.Schedules())
			}
			t.Log(res)
		})
	}
}

// An exploration is a pure function of its target and bound: every level's
// counts and the counterexample do not depend on the number of workers.
func TestExhaustDoesNotDependOnParallelism(t *testing.T) {
	tg := seedrun.Target{Variant: variant("fix-validity"), Config: exhaust.SmallWorld(3, 2, 1)}
	var want exhaust.ExhaustResult
	for i, p := range []int{1, 2, 3} {
		res, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 2, Parallel: p})
		if err != nil {
			t.Fatal(err)
		}
		if res.Counterexample == nil {
			t.Fatal("fix-validity leaves partial locks behind: want a counterexample")
		}
		if i == 0 {
			want = res
			continue
		}
		if !reflect.DeepEqual(res.Levels, want.Levels) || res.Counterexample.Hash != want.Counterexample.Hash ||
			!reflect.DeepEqual(res.Counterexample.Schedule, want.Counterexample.Schedule) {
			t.Fatalf("parallel %d: %+v %s; parallel 1: %+v %s", p, res.Levels, res, want.Levels, want)
		}
	}
}

// With KeepGoing the exploration goes on past its first failing level to
// the bound, counting what fails at each; the counterexample is still the
// first level's.
func TestExhaustKeepGoingCountsEveryLevel(t *testing.T) {
	tg := seedrun.Target{Variant: variant("original"), Config: exhaust.SmallWorld(1, 2, 1)}
	first, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 2})
	if err != nil || first.Counterexample == nil || len(first.Levels) != 2 {
		t.Fatalf("without KeepGoing: %+v, %v; want a counterexample at one fault", first.Levels, err)
	}
	all, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 2, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Levels) != 3 || !all.Complete || all.Levels[2].Failing == 0 || all.Levels[2].Schedules <= all.Levels[1].Schedules {
		t.Fatalf("with KeepGoing: %+v", all.Levels)
	}
	if !reflect.DeepEqual(all.Levels[:2], first.Levels) || all.Counterexample.Hash != first.Counterexample.Hash {
		t.Fatalf("KeepGoing changed the first levels or the counterexample: %+v vs %+v", all.Levels, first.Levels)
	}
}

// A counterexample's repro carries its schedule: read back and replayed,
// it runs to the same trace hash and verdict, and a schedule that does not
// fit the run is an error, not another run.
func TestExhaustCounterexampleReplays(t *testing.T) {
	tg := seedrun.Target{Variant: variant("original"), Config: exhaust.SmallWorld(3, 2, 1)}
	res, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 1})
	if err != nil || res.Counterexample == nil {
		t.Fatalf("%v, %v", res, err)
	}
	x := *res.Counterexample
	data, err := repro.NewRepro(tg, x).Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := repro.DecodeRepro(data, func(string) (algorithm.Variant, error) { return tg.Variant, nil })
	if err != nil {
		t.Fatal(err)
	}
	if r.Schedule == nil || r.Schedule.Faults() != 1 {
		t.Fatalf("the repro's schedule: %+v", r.Schedule)
	}
	o, err := repro.Replay(r, seedrun.Options{Check: r.CheckOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if o.Hash != x.Hash || !reflect.DeepEqual(o.Verdict, x.Verdict) {
		t.Fatalf("replayed to hash %x, verdict %s; explored %x, %s", o.Hash, o.Verdict, x.Hash, x.Verdict)
	}
	r.Schedule.Deviations[0].Pos = 1 << 20
	if _, err := repro.Replay(r, seedrun.Options{Check: r.CheckOptions()}); err == nil || !strings.Contains(err.Error(), "branching points") {
		t.Fatalf("a deviation past the run's last point: %v", err)
	}
	bad := regexp.MustCompile(`"alt": [0-9]+`).ReplaceAllString(string(data), `"alt": 0`)
	if _, err := repro.DecodeRepro([]byte(bad), func(string) (algorithm.Variant, error) { return tg.Variant, nil }); err == nil {
		t.Fatal("a deviation with alternative 0 was read")
	}
}

var updateExhaust = flag.Bool("update-exhaust", false, "rewrite testdata/exhaust-small.txt")

// The golden counts: for every variant, the schedules and failing
// schedules per level of the small world (3 nodes, 2 clients, 1 grant
// each) with up to one fault inside its envelope. A change that shrinks or
// grows the explored space, or what fails in it, shows here; -update-exhaust
// rewrites the file after a change meant to do so.
func TestExhaustGoldenCounts(t *testing.T) {
	if raceEnabled {
		t.Skip("the counts do not change under the race detector; the runs are slower")
	}
	var b strings.Builder
	for _, v := range variants.All() {
		res, err := exhaust.Exhaust(seedrun.Target{Variant: v, Config: exhaust.SmallWorld(3, 2, 1)}, exhaust.ExhaustOptions{MaxFaults: 1})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s", v.Name)
		for _, l := range res.Levels {
			fmt.Fprintf(&b, " k%d=%d/%d", l.Faults, l.Failing, l.Schedules)
		}
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", "exhaust-small.txt")
	if *updateExhaust {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-exhaust to write it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Fatalf("exhaust counts changed (failing/schedules per level):\n%s\nwant:\n%s", diffLines(got, string(want)), want)
	}
}

// diffLines lists the lines of got that want does not have.
func diffLines(got, want string) string {
	have := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(want))
	for sc.Scan() {
		have[sc.Text()] = true
	}
	var out []string
	sc = bufio.NewScanner(strings.NewReader(got))
	for sc.Scan() {
		if !have[sc.Text()] {
			out = append(out, "  "+sc.Text())
		}
	}
	return strings.Join(out, "\n")
}

// Beyond the envelope the menu offers what the envelope rules out: for
// corrected, which assumes no clock jumps, a node's clock stepping just
// under the TTL breaks mutual exclusion with one more fault (a lost reply
// leaves the holder one item short), and the violation is judged expected,
// after the clock-jumps breach.
func TestExhaustBeyondClockJumps(t *testing.T) {
	if !*long {
		t.Skip("two faults: 56,000 schedules (-long)")
	}
	tg := seedrun.Target{Variant: variant("corrected"), Config: exhaust.SmallWorld(3, 2, 1), Classes: []faults.Class{faults.ClassAll},
		Beyond: []algorithm.Assumption{algorithm.ClockJumps}}
	if inside := seedrun.MenuFor(seedrun.Target{Variant: tg.Variant, Config: tg.Config}); len(inside.ClockSteps) > 0 {
		t.Fatalf("inside corrected's envelope the menu steps clocks: %v", inside.ClockSteps)
	}
	res, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 2, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Counterexample
	if x == nil || x.Schedule.Faults() != 2 {
		t.Fatalf("want a counterexample with 2 faults: %s", res)
	}
	f := x.Findings[0]
	if f.Kind != model.MutualExclusion || f.Bug() || f.Breach == nil || f.Breach.Assumption != algorithm.ClockJumps {
		t.Fatalf("want mutual exclusion, expected after clock-jumps: %s", f)
	}
}

// Stop ends an exploration in its level, and what was found is kept: the
// original fails at k=1, OnFound sees the first failing schedule as soon
// as it is found, and closing Stop there leaves a counterexample with the
// fewest faults (level 0 was run whole) and a level run in part. Closed
// before the start, nothing runs, and the result says so.
func TestExhaustStopsAndKeepsWhatItFound(t *testing.T) {
	tg := seedrun.Target{Variant: variant("original"), Config: exhaust.SmallWorld(3, 2, 1)}
	whole, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 1})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var found *seedrun.Outcome
	res, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 1, Parallel: 1, Stop: stop, OnFound: func(o seedrun.Outcome) {
		found = &o
		close(stop)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if found == nil || found.Schedule.Faults() != 1 || !found.Failed() {
		t.Fatalf("OnFound saw %v, want a failing schedule with 1 fault", found)
	}
	last := res.Levels[len(res.Levels)-1]
	if !res.Interrupted || res.Complete || last.Faults != 1 || last.Schedules >= whole.Levels[1].Schedules || res.Of != whole.Levels[1].Schedules {
		t.Fatalf("interrupted %v, complete %v, level %+v of %d; want level 1 in part of %d", res.Interrupted, res.Complete, last, res.Of, whole.Levels[1].Schedules)
	}
	if x := res.Counterexample; x == nil || x.Hash != found.Hash || !strings.Contains(res.String(), "interrupted after") {
		t.Fatalf("the stopped exploration's counterexample: %s", res)
	}
	closed := make(chan struct{})
	close(closed)
	none, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 1, Stop: closed})
	if err != nil || !none.Interrupted || none.Schedules() != 0 || none.Counterexample != nil || !strings.Contains(none.String(), "interrupted before") {
		t.Fatalf("stopped before the start: %s, %v", none, err)
	}
}

// A variant that loops without calling its Env cannot be interrupted in
// the process; with HangAfter the exploration ends with a HangError whose
// outcome is a hang finding with the schedule, to write and replay
// isolated, instead of hanging the harness.
func TestExhaustReportsASpinningVariant(t *testing.T) {
	var release atomic.Bool
	defer release.Store(true) // let the spinning run finish, off the test's books
	spin := algorithm.Variant{Name: "spins", New: func() algorithm.Lock { return spinLock{&release} }}
	tg := seedrun.Target{Variant: spin, Config: exhaust.SmallWorld(3, 2, 1)}
	_, err := exhaust.Exhaust(tg, exhaust.ExhaustOptions{MaxFaults: 1, HangAfter: 300 * time.Millisecond})
	var hang *exhaust.HangError
	if !errors.As(err, &hang) {
		t.Fatalf("Exhaust returned %v, want a HangError", err)
	}
	o := hang.Outcome
	if o.Schedule == nil || o.Schedule.Faults() != 0 || len(o.Findings) != 1 || o.Findings[0].Kind != model.Hang || !o.Findings[0].Bug() {
		t.Fatalf("the hang's outcome: schedule %v, findings %v", o.Schedule, o.Findings)
	}
	if _, err := repro.NewRepro(tg, o).Encode(); err != nil {
		t.Fatalf("the hang's repro: %v", err)
	}
}

// spinLock spins in Acquire, calling nothing, until released.
type spinLock struct{ release *atomic.Bool }

func (l spinLock) Acquire(algorithm.Env, string) algorithm.Grant {
	for !l.release.Load() {
	}
	return algorithm.Grant{}
}

func (spinLock) Release(algorithm.Env, string, algorithm.Grant) {}
