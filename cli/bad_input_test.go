package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
)

// badCase is one bad command line: args after "locksim", and what its one
// sentence on stderr must contain ("" for anything).
type badCase struct {
	args []string
	want string
}

// Every bad input, on every subcommand, is one sentence on stderr that
// names the subcommand, exit 2, and nothing on stdout, before anything
// runs. The cases are generated: every subcommand × every flag it takes ×
// the ways its kind of value can be wrong, and every file argument × the
// ways a file can be wrong.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	writeBadInputFixtures(t, dir)
	t.Chdir(dir)
	cases := badInputCases()
	if len(cases) < 250 {
		t.Fatalf("only %d bad inputs", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		if seen[name] {
			t.Errorf("case %q is listed twice", name)
		}
		seen[name] = true
		var stdout, stderr bytes.Buffer
		code := Run(c.args, &stdout, &stderr)
		msg := stderr.String()
		prefix := "locksim " + c.args[0] + ": "
		switch {
		case code != exitUsage:
			t.Errorf("locksim %s: exit %d, want 2 (stderr %q)", name, code, msg)
		case stdout.Len() > 0:
			t.Errorf("locksim %s: wrote %q on stdout", name, stdout.String())
		case strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, ".\n"):
			t.Errorf("locksim %s: stderr is not one sentence on one line: %q", name, msg)
		case !strings.HasPrefix(msg, prefix):
			t.Errorf("locksim %s: stderr does not start %q: %q", name, prefix, msg)
		case !strings.Contains(msg, c.want):
			t.Errorf("locksim %s: stderr %q does not say %q", name, msg, c.want)
		}
	}
	t.Logf("%d bad inputs", len(cases))
}

// badInputCases are every subcommand's bad inputs.
func badInputCases() []badCase {
	var cs []badCase
	for _, cmd := range []string{"run", "sweep", "replay"} {
		cs = append(cs, scenarioCases(cmd)...)
	}
	for _, cmd := range []string{"run", "sweep", "replay", "compare", "explore", "minimize"} {
		for _, c := range isolationCases(cmd) {
			if cmd == "minimize" { // which takes the file first
				c.args = append([]string{cmd, "repro.json"}, c.args[1:]...)
			}
			cs = append(cs, c)
		}
	}
	for _, cmd := range []string{"explore", "compare"} {
		cs = append(cs, worldCases(cmd)...)
	}
	for _, cmd := range []string{"replay", "minimize"} {
		cs = append(cs, reproFileCases(cmd)...)
	}
	cs = append(cs, runCases()...)
	cs = append(cs, sweepCases()...)
	cs = append(cs, replayCases()...)
	cs = append(cs, minimizeCases()...)
	cs = append(cs, exploreCases()...)
	cs = append(cs, compareCases()...)
	cs = append(cs, mergeCases()...)
	cs = append(cs, otherCases()...)
	return cs
}

// flagCases is cmd with flag set to each of values.
func flagCases(cmd, flag, want string, values ...string) []badCase {
	cs := make([]badCase, len(values))
	for i, v := range values {
		cs[i] = badCase{[]string{cmd, "-" + flag, v}, want}
	}
	return cs
}

// boolCases is cmd with switch flag given each of values, which are not
// true or false.
func boolCases(cmd, flag string, values ...string) []badCase {
	cs := make([]badCase, len(values))
	for i, v := range values {
		cs[i] = badCase{[]string{cmd, "-" + flag + "=" + v}, "invalid boolean value"}
	}
	return cs
}

// The world's flags, which every command that builds a world takes: ints
// negative, past their limit, not numbers; durations negative, zero where
// that means nothing, past their limit, without a unit; the -config file.
func worldCases(cmd string) []badCase {
	var cs []badCase
	for _, f := range []string{"nodes", "replication", "hosts", "threads"} {
		cs = append(cs, flagCases(cmd, f, "", "-1", "1000000")...)
		cs = append(cs, flagCases(cmd, f, "invalid value", "many", "1e99")...)
	}
	cs = append(cs, flagCases(cmd, "acquisitions", "", "-1")...)
	cs = append(cs, flagCases(cmd, "acquisitions", "invalid value", "lots")...)
	cs = append(cs, flagCases(cmd, "slow-host", "slow link", "-1", "3", "1000000")...)
	cs = append(cs, flagCases(cmd, "slow-node", "slow link", "-2", "1000000")...)
	cs = append(cs, flagCases(cmd, "ring-salt", "invalid value", "salty")...)
	for _, f := range []string{"ttl", "duration", "latency-min", "latency-max", "latency-tail", "rpc-timeout",
		"hold-min", "hold-max", "think-min", "think-max", "slow-extra"} {
		cs = append(cs, flagCases(cmd, f, "config: ", "-1s", "1000000h")...)
		cs = append(cs, flagCases(cmd, f, "invalid value", "5", "soon")...)
	}
	for _, f := range []string{"ttl", "duration", "rpc-timeout"} {
		cs = append(cs, flagCases(cmd, f, "must be positive", "0s")...)
	}
	cs = append(cs, flagCases(cmd, "duration", "longer than a run may last", "2h", "2562047h")...)
	cs = append(cs, badCase{[]string{cmd, "-hosts", "17", "-duration", "1h"}, "client time"})
	cs = append(cs, badCase{[]string{cmd, "-slow-extra", "10ms", "-slow-host", "7"}, "slow_host"})
	cs = append(cs, flagCases(cmd, "app-data", "app_data", "everything")...)
	cs = append(cs, boolCases(cmd, "restarting-versions", "perhaps")...)
	cs = append(cs, configFileCases(cmd)...)
	cs = append(cs, badCase{[]string{cmd, "-nosuch"}, "flag provided but not defined"})
	cs = append(cs, badCase{[]string{cmd, "-nodes"}, "flag needs an argument"})
	return cs
}

// configFileCases are the ways a -config file can be wrong.
func configFileCases(cmd string) []badCase {
	return append(flagCases(cmd, "config", "", "missing.json", "subdir", "/dev/zero", "empty.json", "truncated.json",
		"list.json", "null.json", "plan.json", "config-big.json", "config-duration.json", "config-hosts.json",
		"config-unknown.json", "config-trailing.json", "config-maxevents.json", "config-ttl.json"),
		flagCases(cmd, "config", "is empty", "")...)
}

// scenarioCases are the bad inputs of the flags run, sweep and replay
// share: the world's, and what each seed draws and how it is judged.
func scenarioCases(cmd string) []badCase {
	cs := worldCases(cmd)
	cs = append(cs, flagCases(cmd, "faults", "unknown class", "weather", "loss,weather")...)
	cs = append(cs, flagCases(cmd, "faults", "", "", "loss,,crash", " ")...)
	cs = append(cs, flagCases(cmd, "beyond", "", "", "gravity", "clock-error,,all")...)
	cs = append(cs, flagCases(cmd, "world", "", "", "weather", "nodes,")...)
	cs = append(cs, flagCases(cmd, "changes", "", "", "no-gravity", "no-wipes,,no-loss")...)
	cs = append(cs, flagCases(cmd, "variant", "", "", "nope")...)
	cs = append(cs, flagCases(cmd, "only", "", "", "fix-nothing")...)
	cs = append(cs, flagCases(cmd, "liveness-bound", "-liveness-bound", "", "0ttl", "-1ttl", "1001ttl",
		"99999999999999999999ttl", "0s", "-5s", "1000000h", "soon")...)
	cs = append(cs, flagCases(cmd, "pct", "", "-1", "17", "1000000")...)
	cs = append(cs, flagCases(cmd, "pct", "invalid value", "deep")...)
	cs = append(cs, flagCases(cmd, "pct-steps", "needs -pct", "-1", "10", "99999999")...)
	cs = append(cs, badCase{[]string{cmd, "-pct", "2", "-pct-steps", "99999999"}, "pct"})
	cs = append(cs, boolCases(cmd, "strict", "maybe")...)
	cs = append(cs, flagCases(cmd, "plan", "", "", "missing.json", "subdir", "/dev/zero", "empty.json", "truncated.json",
		"list.json", "null.json", "repro.json", "plan-big.json", "plan-events.json", "plan-threads.json",
		"plan-unknown.json", "plan-trailing.json", "plan-offset.json", "plan-jumps.json", "plan-for.json",
		"plan-node.json")...)
	cs = append(cs, badCase{[]string{cmd, "-plan", "plan.json", "-faults", "loss"}, "give -plan or -faults"})
	cs = append(cs, badCase{[]string{cmd, "-hosts", "30"}, "a seed may draw"})
	if cmd != "sweep" {
		cs = append(cs, flagCases(cmd, "seed", "invalid value", "-1", "18446744073709551616", "first")...)
	}
	return cs
}

// isolationCases are the bad values of the flags of worker processes.
func isolationCases(cmd string) []badCase {
	cs := flagCases(cmd, "hang-after", "", "0s", "-1s")
	cs = append(cs, flagCases(cmd, "hang-after", "invalid value", "later")...)
	cs = append(cs, flagCases(cmd, "memory-limit", "-memory-limit", "", "lots", "1MiB", "-5MiB", "512")...)
	cs = append(cs, badCase{[]string{cmd, "-isolate=false", "-memory-limit", "lots"}, "-memory-limit"})
	return append(cs, boolCases(cmd, "isolate", "sometimes")...)
}

// reproFileCases are the ways a repro file given to cmd can be wrong.
func reproFileCases(cmd string) []badCase {
	var cs []badCase
	for _, file := range []string{"missing.json", "subdir", "/dev/zero", "empty.json", "truncated.json", "list.json",
		"null.json", "plan.json", "shard-0.json", "repro-big.json", "repro-format.json", "repro-variant.json",
		"repro-duration62.json", "repro-duration2h.json", "repro-hosts.json", "repro-threads.json",
		"repro-events.json", "repro-offset.json", "repro-check.json", "repro-schedule.json", "repro-trailing.json",
		"repro-unknown.json", "repro-class.json", "repro-for.json", "repro-maxevents.json"} {
		cs = append(cs, badCase{[]string{cmd, file}, ""})
	}
	return append(cs, badCase{[]string{cmd, "repro.json", "repro.json"}, ""})
}

func runCases() []badCase {
	cs := []badCase{
		{[]string{"run", "-out", "afile"}, "-out afile"},
		{[]string{"run", "-html", "subdir"}, "is a directory"},
		{[]string{"run", "-html", "afile/x.html"}, "cannot be written"},
		{[]string{"run", "extra"}, "unexpected argument"},
	}
	cs = append(cs, boolCases("run", "trace", "all")...)
	return append(cs, boolCases("run", "json", "pretty")...)
}

func sweepCases() []badCase {
	cs := flagCases("sweep", "n", "", "0", "-1", "many", "1.5", "0k", "100000001", "10000000T", "", "18446744073709551616")
	cs = append(cs, flagCases("sweep", "seeds", "", "5..2", "x..", "7", "", "0..99999999999", "1..2..3")...)
	cs = append(cs, badCase{[]string{"sweep", "-seeds", "18446744073709551610..", "-n", "10"}, "largest seed"},
		badCase{[]string{"sweep", "-seeds", "18446744073709551610..", "-n", "forever"}, "runs out of seeds"},
		badCase{[]string{"sweep", "-seeds", "1..10", "-n", "5"}, "already says how many"})
	cs = append(cs, flagCases("sweep", "parallel", "", "-1", "1025", "all")...)
	cs = append(cs, flagCases("sweep", "stop-on", "", "never", "")...)
	cs = append(cs, flagCases("sweep", "shard", "", "4/4", "-1/4", "a/b", "0/0", "", "1", "env/0")...)
	cs = append(cs, flagCases("sweep", "why-max", "", "-1", "some")...)
	cs = append(cs, boolCases("sweep", "keep-going", "forever")...)
	cs = append(cs, boolCases("sweep", "why", "because")...)
	return append(cs, badCase{[]string{"sweep", "-out", "afile", "-n", "1"}, "cannot hold repro files"},
		badCase{[]string{"sweep", "extra"}, "unexpected argument"})
}

func replayCases() []badCase {
	return []badCase{
		{[]string{"replay", "repro.json", "-html-model", "graph"}, "-html-model"},
		{[]string{"replay", "repro.json", "-html", "subdir"}, "is a directory"},
		{[]string{"replay", "repro.json", "-seed", "4"}, "not both"},
		{[]string{"replay", "repro.json", "-faults", "loss"}, "not both"},
		{[]string{"replay", "repro.json", "-why=often"}, "invalid boolean"},
	}
}

func minimizeCases() []badCase {
	cs := []badCase{
		{[]string{"minimize"}, "give exactly one repro file"},
		{[]string{"minimize", "repro.json", "-out", "afile"}, "-out afile"},
		{[]string{"minimize", "repro.json", "-nosuch"}, "flag provided but not defined"},
		{[]string{"minimize", "repro.json", "-trace=full"}, "invalid boolean"},
	}
	for _, v := range []string{"0", "-1", "many", "99999999999999999999"} {
		cs = append(cs, badCase{[]string{"minimize", "repro.json", "-max-runs", v}, "max-runs"})
	}
	for _, v := range []string{"", "weather"} {
		cs = append(cs, badCase{[]string{"minimize", "repro.json", "-kind", v}, "kind"})
	}
	return cs
}

func exploreCases() []badCase {
	cs := flagCases("explore", "max-faults", "", "-1", "7", "1000000", "few")
	cs = append(cs, flagCases("explore", "max-schedules", "", "0", "-1", "lots")...)
	cs = append(cs, flagCases("explore", "parallel", "", "-1", "1025", "all")...)
	cs = append(cs, flagCases("explore", "faults", "", "", "weather", "loss,,crash")...)
	cs = append(cs, flagCases("explore", "beyond", "", "", "gravity")...)
	cs = append(cs, flagCases("explore", "world", "", "", "all", "nodes")...)
	cs = append(cs, flagCases("explore", "variant", "", "", "nope")...)
	cs = append(cs, boolCases("explore", "safety-only", "mostly")...)
	return append(cs, badCase{[]string{"explore", "-out", "afile"}, "-out afile"},
		badCase{[]string{"explore", "extra"}, "unexpected argument"})
}

func compareCases() []badCase {
	cs := flagCases("compare", "n", "", "0", "-1", "many", "forever", "")
	cs = append(cs, flagCases("compare", "seeds", "", "5..2", "7", "")...)
	cs = append(cs, flagCases("compare", "costs", "", "-1", "100000001", "some")...)
	cs = append(cs, flagCases("compare", "exhaust", "", "-1", "5", "deep")...)
	cs = append(cs, flagCases("compare", "parallel", "", "-1", "1025", "all")...)
	cs = append(cs, flagCases("compare", "variants", "", "nope", "", "original,,corrected")...)
	cs = append(cs, flagCases("compare", "faults", "", "weather", "", "loss,")...)
	cs = append(cs, flagCases("compare", "world", "", "weather", "")...)
	cs = append(cs, flagCases("compare", "md", "is a directory", "subdir")...)
	cs = append(cs, flagCases("compare", "html", "cannot be written", "afile/m.html")...)
	cs = append(cs, boolCases("compare", "minimize", "twice")...)
	return append(cs, badCase{[]string{"compare", "-out", "afile"}, "-out afile"},
		badCase{[]string{"compare", "-world", "nodes", "-nodes", "3"}, "pins it"},
		badCase{[]string{"compare", "-fixed-world"}, "-world none"},
		badCase{[]string{"compare", "-hosts", "30"}, "a seed may draw"},
		badCase{[]string{"compare", "-json", "m.json"}, "unexpected argument"},
		badCase{[]string{"compare", "extra"}, "unexpected argument"})
}

func mergeCases() []badCase {
	cs := []badCase{
		{[]string{"merge"}, "give the -json outputs"},
		{[]string{"merge", "-", "-"}, "given twice"},
		{[]string{"merge", "shard-0.json"}, "missing"},
		{[]string{"merge", "shard-0.json", "shard-0.json"}, "given twice"},
		{[]string{"merge", "shard-0.json", "shard-other.json"}, "not shards of one sweep"},
		{[]string{"merge", "shard-0.json", "shard-runs.json"}, "do not fit"},
		{[]string{"merge", "shard-seeds.json"}, "largest seed"},
		{[]string{"merge", "-partial=half", "shard-0.json"}, "invalid boolean"},
		{[]string{"merge", "-nosuch", "shard-0.json"}, "flag provided but not defined"},
	}
	for _, file := range []string{"missing.json", "subdir", "/dev/zero", "empty.json", "truncated.json", "list.json",
		"null.json", "repro.json", "plan.json", "shard-trailing.json"} {
		cs = append(cs, badCase{[]string{"merge", file}, ""})
	}
	return cs
}

// otherCases are the commands without a world: variants, help, version.
func otherCases() []badCase {
	return []badCase{
		{[]string{"variants", "extra"}, "unexpected argument"},
		{[]string{"variants", "-x"}, "flag provided but not defined"},
		{[]string{"variants", "-v=maybe"}, "invalid boolean"},
		{[]string{"help", "run", "sweep"}, "at most one subcommand"},
		{[]string{"help", "frob"}, "unknown subcommand"},
		{[]string{"help", "-x"}, "unknown subcommand"},
		{[]string{"version", "extra"}, "unexpected argument"},
		{[]string{"version", "-json"}, "flag provided but not defined"},
	}
}

// writeBadInputFixtures writes the files the cases name into dir: a valid
// repro, plan, config and shard, and each made wrong in one way.
func writeBadInputFixtures(t *testing.T, dir string) {
	t.Helper()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sparse := func(name string, size int64) {
		f, err := os.Create(filepath.Join(dir, name))
		if err == nil {
			err = f.Truncate(size)
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("afile", []byte("a file, not a directory\n"))
	write("empty.json", nil)
	write("truncated.json", []byte(`{"format": 1, "variant": "orig`))
	write("list.json", []byte("[1, 2, 3]\n"))
	write("null.json", []byte("null\n"))
	sparse("plan-big.json", faults.MaxPlanBytes+1)
	sparse("repro-big.json", explore.MaxReproBytes+1)
	sparse("config-big.json", explore.MaxConfigBytes+1)
	for name, data := range badPlans(t) {
		write(name, data)
	}
	for name, data := range badRepros(t) {
		write(name, data)
	}
	for name, data := range badConfigs() {
		write(name, []byte(data))
	}
	for name, data := range badShards(t) {
		write(name, data)
	}
}

// badPlans are a valid plan and plans each wrong in one way.
func badPlans(t *testing.T) map[string][]byte {
	pause := faults.Event{At: 1e9, Kind: faults.Pause, Client: 0, For: 1e9}
	plans := map[string]faults.Plan{
		"plan.json":         {Events: []faults.Event{pause}},
		"plan-threads.json": {ThreadsPerHost: 40},
		"plan-offset.json":  {Clocks: []faults.Clock{{Kind: faults.HostProcess, Index: 0, Offset: 2 * faults.MaxSpan}}},
		"plan-for.json":     {Events: []faults.Event{{At: 1e9, Kind: faults.Clog, Node: 0, For: 2 * faults.MaxSpan}}},
		"plan-node.json":    {Events: []faults.Event{{At: 1e9, Kind: faults.Crash, Node: 9}}},
	}
	jump := faults.Event{At: 1e9, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 0, Delta: faults.MaxSpan}
	plans["plan-jumps.json"] = faults.Plan{Events: []faults.Event{jump, jump}}
	many := make([]faults.Event, faults.MaxEvents+1)
	for i := range many {
		many[i] = faults.Event{Kind: faults.Pause, For: 1e6}
	}
	plans["plan-events.json"] = faults.Plan{Events: many}
	out := map[string][]byte{}
	for name, p := range plans {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	out["plan-unknown.json"] = []byte(`{"network": {"loss": 5}}`)
	out["plan-trailing.json"] = append(out["plan.json"], []byte(" {}")...)
	return out
}

// badRepros are a valid repro and repros each wrong in one way.
func badRepros(t *testing.T) map[string][]byte {
	valid := explore.Repro{Format: explore.ReproFormat, Version: explore.Version, Variant: "original", Seed: 1,
		Config: sim.DefaultConfig(), TraceHash: "0000000000000000"}
	base, err := valid.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"repro.json": base}
	edits := map[string]func(r, config, plan map[string]any){
		"repro-format.json":     func(r, _, _ map[string]any) { r["format"] = 99 },
		"repro-variant.json":    func(r, _, _ map[string]any) { r["variant"] = "nope" },
		"repro-unknown.json":    func(r, _, _ map[string]any) { r["bogus"] = 1 },
		"repro-class.json":      func(r, _, _ map[string]any) { r["classes"] = []string{"weather"} },
		"repro-check.json":      func(r, _, _ map[string]any) { r["check"] = map[string]any{"LivenessBoundTTLs": 5000} },
		"repro-duration62.json": func(_, c, _ map[string]any) { c["duration"] = int64(1) << 62 },
		"repro-duration2h.json": func(_, c, _ map[string]any) { c["duration"] = int64(2 * time.Hour) },
		"repro-hosts.json":      func(_, c, _ map[string]any) { c["hosts"] = 65 },
		"repro-threads.json":    func(_, c, _ map[string]any) { c["threads_per_host"] = 100 },
		"repro-maxevents.json":  func(_, c, _ map[string]any) { c["max_events"] = int64(1e12) },
		"repro-schedule.json": func(r, _, _ map[string]any) {
			r["schedule"] = map[string]any{"menu": map[string]any{"crash": true, "crash_for": int64(1) << 62}, "deviations": []any{}}
		},
		"repro-offset.json": func(_, _, p map[string]any) {
			p["clocks"] = []any{map[string]any{"kind": "host", "index": 0, "offset": int64(1) << 62}}
		},
		"repro-for.json": func(_, _, p map[string]any) {
			p["events"] = []any{map[string]any{"at": 0, "kind": "clog", "node": 0, "for": int64(1) << 62}}
		},
		"repro-events.json": func(_, _, p map[string]any) {
			many := make([]any, faults.MaxEvents+1)
			for i := range many {
				many[i] = map[string]any{"at": 0, "kind": "pause", "for": 1000}
			}
			p["events"] = many
		},
	}
	for name, edit := range edits {
		var r map[string]any
		if err := json.Unmarshal(base, &r); err != nil {
			t.Fatal(err)
		}
		edit(r, r["config"].(map[string]any), r["plan"].(map[string]any))
		if out[name], err = json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	}
	out["repro-trailing.json"] = append(slices.Clone(base), []byte("{}\n")...)
	return out
}

// badConfigs are -config files each wrong in one way.
func badConfigs() map[string]string {
	return map[string]string{
		"config-duration.json":  fmt.Sprintf(`{"duration": %d}`, int64(1)<<62),
		"config-hosts.json":     `{"hosts": 65}`,
		"config-unknown.json":   `{"hostz": 3}`,
		"config-trailing.json":  `{"hosts": 3} {"hosts": 4}`,
		"config-maxevents.json": `{"max_events": 1000000000000}`,
		"config-ttl.json":       fmt.Sprintf(`{"ttl": %d}`, int64(1)<<62),
	}
}

// badShards are a shard of a sweep, and shards that do not go with it or
// are not consistent.
func badShards(t *testing.T) map[string][]byte {
	shard := func(variant string, from uint64, count, k, runs int) explore.SweepReport {
		return explore.SweepReport{Version: explore.Version,
			Target:     explore.TargetReport{Variant: variant, Classes: []faults.Class{faults.ClassAll}, Config: sim.DefaultConfig()},
			Seeds:      explore.SeedsReport{From: from, Count: count, ShardIndex: k, ShardCount: 2},
			Runs:       runs,
			ExpectedBy: []explore.BreachCount{}, Failures: []explore.FailureReport{}}
	}
	out := map[string][]byte{}
	for name, s := range map[string]explore.SweepReport{
		"shard-0.json":     shard("original", 1, 10, 0, 5),
		"shard-other.json": shard("corrected", 1, 10, 1, 5),
		"shard-runs.json":  shard("original", 1, 10, 1, 50),
		"shard-seeds.json": shard("original", math.MaxUint64-5, 10, 0, 0),
	} {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	out["shard-trailing.json"] = append(slices.Clone(out["shard-0.json"]), []byte("[]")...)
	return out
}
