package sweep_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/sim/sweep"
)

// reportOf is the report a sweep of o writes, failures and all.
func reportOf(t *testing.T, tg seedrun.Target, o sweep.SweepOptions) sweep.SweepReport {
	t.Helper()
	r := sweep.NewSweepReport(tg, false, o)
	o.OnOutcome = func(out seedrun.Outcome) {
		if out.Failed() {
			r.Failures = append(r.Failures, sweep.NewFailureReport(out, tg, "replay", ""))
		}
	}
	res, err := sweep.Sweep(tg, o)
	if err != nil {
		t.Fatal(err)
	}
	r.Count(res)
	return r
}

// Three keep-going shards, merged, are the unsharded sweep's report, and
// their JSON reads back as the same shards. What is not a sweep of the
// same seeds is refused, saying why.
func TestMergeShardsIsTheUnshardedSweep(t *testing.T) {
	tg := seedrun.Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassThreads}}
	tg.Config.Duration = 20 * time.Second
	whole := reportOf(t, tg, sweep.SweepOptions{From: 1, Count: 60, KeepGoing: true})
	if len(whole.Failures) == 0 {
		t.Fatal("the original found no failure in 60 seeds of threads: nothing to merge")
	}
	var stream bytes.Buffer
	for k := range 3 {
		r := reportOf(t, tg, sweep.SweepOptions{From: 1, Count: 60, KeepGoing: true, ShardIndex: k, ShardCount: 3})
		if err := json.NewEncoder(&stream).Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := sweep.DecodeShards("shards.json", &stream)
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 3 || shards[1].Name != "shards.json (sweep 2)" {
		t.Fatalf("read %d shards, the second named %q", len(shards), shards[min(1, len(shards)-1)].Name)
	}
	m, err := sweep.MergeShards(shards, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Result, whole) {
		t.Errorf("merged:\n%+v\nunsharded:\n%+v", m.Result, whole)
	}
	if m.NotRun() != "" || m.DescribeShards() != "merged from 3 shards" {
		t.Errorf("a whole merge says %q, %q", m.DescribeShards(), m.NotRun())
	}

	if _, err := sweep.MergeShards(shards[:2], false); err == nil || !strings.Contains(err.Error(), "shard 2/3 is missing") {
		t.Errorf("two of three shards: %v", err)
	}
	if m, err := sweep.MergeShards(shards[:2], true); err != nil || m.Result.Runs != 40 || !strings.Contains(m.NotRun(), "20 not run") {
		t.Errorf("two of three shards, partial: %v, %d runs, %q", err, m.Result.Runs, m.NotRun())
	}
	twice := append([]sweep.Shard{}, shards...)
	twice[2] = twice[1]
	if _, err := sweep.MergeShards(twice, false); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a shard given twice: %v", err)
	}
	other := append([]sweep.Shard{}, shards...)
	other[1].Target.Config.Nodes++
	if _, err := sweep.MergeShards(other, false); err == nil || !strings.Contains(err.Error(), "differ in config nodes") {
		t.Errorf("a shard of another config: %v", err)
	}
	stray := append([]sweep.Shard{}, shards...)
	stray[0].Failures = append([]sweep.FailureReport{{Seed: 2}}, stray[0].Failures...)
	if _, err := sweep.MergeShards(stray, false); err == nil || !strings.Contains(err.Error(), "failing seed 2 is not in shard 0/3") {
		t.Errorf("a failing seed of another shard: %v", err)
	}
	if _, err := sweep.DecodeShards("repro.json", strings.NewReader(`{"seed": 3}`)); err == nil {
		t.Error("a repro file read as a sweep report")
	}
}
