package explore

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/variants"
)

func shortTarget(name string, classes ...faults.Class) Target {
	c := sim.DefaultConfig()
	c.Duration = 2 * time.Minute
	return Target{Variant: variant(name), Config: c, Classes: classes}
}

// A sweep reports the same outcomes in the same (seed) order whatever the
// number of workers.
func TestSweepResultsDoNotDependOnParallelism(t *testing.T) {
	tg := shortTarget("original", faults.ClassAll)
	collect := func(parallel int) []string {
		var got []string
		_, err := Sweep(tg, SweepOptions{From: 1, Count: 24, Parallel: parallel, KeepGoing: true,
			OnOutcome: func(o Outcome) {
				got = append(got, utoa(o.Seed)+":"+utoa(o.Hash)+":"+itoa(len(o.Verdict.Violations)))
			}})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	one, four := collect(1), collect(4)
	if len(one) != 24 || !slices.Equal(one, four) {
		t.Fatalf("parallel 1 and 4 differ:\n%v\n%v", one, four)
	}
}

// Stopping at the first violation reports the first failing seed in seed
// order, even when later seeds finish first on other workers.
func TestSweepStopsAtFirstFailingSeed(t *testing.T) {
	tg := shortTarget("original", faults.ClassThreads)
	res, err := Sweep(tg, SweepOptions{From: 5, Count: 50, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Seed != 5 || res.Runs != 1 {
		t.Fatalf("want exactly seed 5 failing after 1 run, got runs=%d failures=%d", res.Runs, len(res.Failures))
	}
}

// N shards cover the seed range exactly once, and their merged failures
// equal a single sweep's.
func TestShardsCoverSeedsExactlyOnce(t *testing.T) {
	all := SweepOptions{From: 100, Count: 37}.Seeds()
	seen := map[uint64]int{}
	for k := 0; k < 4; k++ {
		for _, s := range (SweepOptions{From: 100, Count: 37, ShardIndex: k, ShardCount: 4}).Seeds() {
			seen[s]++
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("shards cover %d seeds, want %d", len(seen), len(all))
	}
	for _, s := range all {
		if seen[s] != 1 {
			t.Fatalf("seed %d covered %d times", s, seen[s])
		}
	}
	tg := shortTarget("original", faults.ClassPause) // no validity: a bug inside the post's envelope
	single, err := Sweep(tg, SweepOptions{From: 1, Count: 12, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	var merged []uint64
	for k := 0; k < 3; k++ {
		r, err := Sweep(tg, SweepOptions{From: 1, Count: 12, KeepGoing: true, ShardIndex: k, ShardCount: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Failures {
			merged = append(merged, f.Seed)
		}
	}
	slices.Sort(merged)
	var want []uint64
	for _, f := range single.Failures {
		want = append(want, f.Seed)
	}
	if len(want) == 0 || !slices.Equal(merged, want) {
		t.Fatalf("merged shard failures %v, single sweep %v", merged, want)
	}
}

func TestSweepRejectsBadOptions(t *testing.T) {
	tg := shortTarget("original")
	for _, o := range []SweepOptions{{Count: -1}, {Count: 3, ShardIndex: 3, ShardCount: 3}, {Count: 1, Parallel: -2}} {
		if _, err := Sweep(tg, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Sweep(Target{Variant: algorithm.Variant{Name: "nope"}, Config: sim.DefaultConfig()}, SweepOptions{Count: 1}); err == nil ||
		!strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("a variant without a constructor: want an error naming it, got %v", err)
	}
}

// Minimize keeps the violation and never grows the plan; a skew failure
// (the post's shared clock broken on purpose) shrinks to a single clock
// setting.
func TestMinimizeShrinksToTheCause(t *testing.T) {
	tg := shortTarget("original", faults.ClassSkew)
	tg.Beyond = []algorithm.Assumption{algorithm.ClockError}
	res, err := Sweep(tg, SweepOptions{From: 1, Count: 40, Run: Options{Check: model.DefaultCheckOptions(), Strict: true}})
	if err != nil || len(res.Failures) == 0 {
		t.Fatalf("no skew failure to minimise (err %v)", err)
	}
	f := res.Failures[0]
	m, err := Minimize(tg, f.Seed, f.Plan, model.MutualExclusion, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Outcome.Verdict.First(model.MutualExclusion); !ok {
		t.Fatal("minimised run lost the violation")
	}
	if m.SizeAfter > m.SizeBefore || m.SizeAfter != 1 || len(m.Outcome.Plan.Clocks) != 1 {
		t.Fatalf("plan size %d -> %d, clocks %v: want one clock setting", m.SizeBefore, m.SizeAfter, m.Outcome.Plan.Clocks)
	}
	if _, err := Minimize(shortTarget("original"), 1, faults.Plan{}, model.MutualExclusion, 0); err == nil {
		t.Fatal("minimising a passing run should be an error")
	}
}

// A repro round-trips, replays to the same hash, and bad files say why.
func TestReproRoundTripAndReplay(t *testing.T) {
	tg := shortTarget("original", faults.ClassThreads)
	o, err := RunSeed(tg, 3, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	data, err := NewRepro(tg, o).Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRepro(data, variants.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Replay(r, DefaultOptions())
	if err != nil || again.Hash != o.Hash || len(again.Verdict.Violations) != len(o.Verdict.Violations) {
		t.Fatalf("replay differs: %x vs %x (err %v)", again.Hash, o.Hash, err)
	}
	bad := map[string]string{
		"not json":        "{",
		"unknown field":   strings.Replace(string(data), `"format"`, `"colour": 1, "format"`, 1),
		"other format":    strings.Replace(string(data), `"format": 1`, `"format": 9`, 1),
		"unknown variant": strings.Replace(string(data), `"variant": "original"`, `"variant": "nope"`, 1),
		"trailing data":   string(data) + "{}",
		"plan outside its classes": strings.Replace(string(data), `"classes": [
    "threads"
  ]`, `"classes": [
    "loss"
  ]`, 1),
	}
	for name, in := range bad {
		if _, err := DecodeRepro([]byte(in), variants.Lookup); err == nil || !strings.HasPrefix(err.Error(), "repro: ") {
			t.Errorf("%s: want a repro: error, got %v", name, err)
		}
	}
}

func TestReplayCommandCarriesNonDefaultConfig(t *testing.T) {
	tg := shortTarget("original", faults.ClassCrash, faults.ClassSkew)
	tg.Config.Replication = 1
	got := ReplayCommand(tg, 42)
	for _, want := range []string{"go run ./cmd/locksim replay", "-variant original", "-seed 42", "-faults crash,skew", "-replication 1", "-duration 2m0s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// A keep-going sweep counts every failure but keeps only the first few, so
// its memory does not grow with the number of failing seeds.
func TestSweepKeepsABoundedNumberOfFailures(t *testing.T) {
	tg := shortTarget("original", faults.ClassThreads) // every seed fails
	seen := 0
	res, err := Sweep(tg, SweepOptions{From: 1, Count: 12, KeepGoing: true, KeepFailures: 3,
		OnOutcome: func(o Outcome) {
			if o.Failed() {
				seen++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 12 || seen != 12 || len(res.Failures) != 3 || res.Failures[2].Seed != 3 {
		t.Fatalf("failed=%d seen=%d kept=%d: want 12 counted and streamed, the first 3 kept", res.Failed, seen, len(res.Failures))
	}
}

// variant is the registered variant called name; tests name only real ones.
var variant = variants.MustLookup

// variantList is the registered variants called names, in that order.
var variantList = variants.MustLookupAll

func utoa(u uint64) string { return strconv.FormatUint(u, 10) }
func itoa(i int) string    { return strconv.Itoa(i) }
