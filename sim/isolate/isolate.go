// Package isolate runs seeds in worker processes that a coordinator
// supervises (Isolation): a seed whose run crashes, hangs, exhausts memory
// or misuses the Env is a finding of that seed, never the end of the call
// that runs it. A worker is the program itself, re-executed, serving jobs
// once it reaches the same isolated call (ServeIfWorker, Contain; a test
// names itself with TestWorkerCommand); a Queue sends a call's seeds (or
// an exploration's schedules) to workers and reads their results back in
// order. Run and RunIsolated run one seed, here or in a worker.
//
// It imports seedrun, schedule and sim/envelope; sweep, exhaust, minimize and compare
// use it when asked to isolate their runs.
package isolate

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/schedule"
	"github.com/locksim/locksim/sim/seedrun"
)

// Isolation runs seeds in worker processes that a coordinator supervises,
// the way Go's fuzzing engine runs its inputs: the program re-executes
// itself, and the copy serves the seeds once it reaches an isolated call
// (Sweep, Compare, Exhaust, Minimize or RunIsolated) of the same variants.
// A worker that dies, makes no progress for HangAfter, or holds more than
// MemoryLimit of heap is a finding of the seed it was running (kinds
// crash, hang and memory), once that seed has failed the same way alone in
// a fresh worker, and the work goes on in a fresh worker. A bad algorithm
// can then take down a worker, never the sweep. Workers die with their
// coordinator, however it ends.
//
// The re-executed program must reach an isolated call of the same
// variants (they are fingerprinted; each job says what to run): the
// locksim command does, with its own arguments; a test names itself
// (TestWorkerCommand).
type Isolation struct {
	// Command re-runs the program up to the isolated call: the executable
	// and its arguments. nil: this process's executable and arguments.
	Command []string
	// Env is added to the workers' environment.
	Env []string
	// HangAfter is how long a worker may go without finishing a seed (or
	// a schedule); 0: DefaultHangAfter.
	HangAfter time.Duration
	// MemoryLimit is a worker's heap budget in bytes: the runtime's soft
	// limit (debug.SetMemoryLimit), and the heap at which the worker
	// stops with a memory finding. 0: DefaultMemoryLimit.
	MemoryLimit int64
	// StartTimeout is how long a worker may take to reach the isolated
	// call; 0: DefaultStartTimeout.
	StartTimeout time.Duration

	// pool, when set, is where the call's workers come from and go back
	// to: one pool serves every sweep of a Compare. metrics, when set,
	// takes each run's metrics (with Options.Keep), and failing seeds are
	// not run again here for their histories: the caller runs again those
	// it shows.
	pool    *workerPool
	metrics *MetricsSink
}

// Defaults of Isolation. A seed of the default world runs in about a
// millisecond, and one of the longest worlds the CLI accepts in seconds,
// so a budget of 20 s is never met by a run that is making progress.
const (
	DefaultHangAfter    = 20 * time.Second
	DefaultMemoryLimit  = 2 << 30
	DefaultStartTimeout = time.Minute
)

func (iso Isolation) hangAfter() time.Duration {
	if iso.HangAfter > 0 {
		return iso.HangAfter
	}
	return DefaultHangAfter
}

func (iso Isolation) memoryLimit() int64 {
	if iso.MemoryLimit > 0 {
		return iso.MemoryLimit
	}
	return DefaultMemoryLimit
}

func (iso Isolation) startTimeout() time.Duration {
	if iso.StartTimeout > 0 {
		return iso.StartTimeout
	}
	return DefaultStartTimeout
}

// WithMetrics is iso with each run's metrics (with Options.Keep) going to
// sink, and failing seeds not run again here for their histories: a
// caller that pools the runs' metrics (Compare) runs again those it shows.
func (iso Isolation) WithMetrics(sink *MetricsSink) Isolation {
	iso.metrics = sink
	return iso
}

// Validate checks the budgets.
func (iso Isolation) Validate() error {
	switch {
	case iso.HangAfter < 0:
		return fmt.Errorf("isolation: hang budget %s is negative", iso.HangAfter)
	case iso.MemoryLimit < 0:
		return fmt.Errorf("isolation: memory limit %d is negative", iso.MemoryLimit)
	case iso.MemoryLimit > 0 && iso.MemoryLimit < 64<<20:
		return fmt.Errorf("isolation: memory limit %d bytes is under 64 MiB, too little to run a seed", iso.MemoryLimit)
	}
	return nil
}

// Environment variables a worker is started with: the fingerprint of the
// calls it serves, and its memory budget.
const (
	workerEnv    = "LOCKSIM_WORKER"
	workerMemEnv = "LOCKSIM_WORKER_MEMORY"
)

// Exit statuses of a worker: past its memory budget, and orphaned (its
// coordinator died).
const (
	exitMemory = 86
	exitOrphan = 87
)

// IsWorker reports whether this process is an isolation worker. Programs
// that print before they reach the isolated call may stay quiet then.
func IsWorker() bool { return os.Getenv(workerEnv) != "" }

// TestWorkerCommand is the Isolation.Command for a test or benchmark named
// name (testing.TB.Name()): this test binary, running only that test, with
// the binary's own flags but none of go test's (-test.*).
func TestWorkerCommand(name string) []string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	argv := []string{exe}
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-test.") && !strings.HasPrefix(a, "--test.") {
			argv = append(argv, a)
		}
	}
	pattern := TestRunPattern(name)
	if strings.HasPrefix(name, "Benchmark") {
		return append(argv, "-test.run=^$", "-test.bench="+pattern, "-test.benchtime=1x", "-test.count=1")
	}
	return append(argv, "-test.run="+pattern, "-test.count=1")
}

// TestRunPattern is the -test.run (or -test.bench) pattern that selects
// exactly the test or subtest named name (testing.TB.Name()).
func TestRunPattern(name string) string {
	var parts []string
	for _, p := range strings.Split(name, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	return strings.Join(parts, "/")
}

// Fingerprint names a call and what its seeds run: a journal's sweep.
func Fingerprint(kind string, t seedrun.Target, run seedrun.Options, more ...string) string {
	b, err := json.Marshal(struct {
		Kind, Variant, Summary, Envelope string
		Config                           any
		Classes, Beyond, World           any
		Plan                             *faults.Plan
		PCT                              *schedule.PCT
		Run                              seedrun.Options
		More                             []string
	}{kind, t.Variant.Name, t.Variant.Summary, fmt.Sprint(t.Variant.Envelope), t.Config, t.Classes, t.Beyond, t.World, t.Plan, t.PCT, run, more})
	if err != nil {
		panic(err) // configs, classes and options are plain data
	}
	return kind + "-" + hash64(b)
}

func hash64(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}

// familyKey names the isolated calls a worker may serve: those that know
// the same variants (by name, summary and envelope) and run them the same
// way (the kernel, or a Runner of one type). Each job says the rest (the
// target, its run options, the seeds), so a worker serves any such call it
// reaches first.
func familyKey(vs []algorithm.Variant, runner seedrun.Runner) string {
	type id struct{ Name, Summary, Envelope string }
	ids := make([]id, len(vs))
	for i, v := range vs {
		ids[i] = id{v.Name, v.Summary, fmt.Sprint(v.Envelope)}
	}
	b, err := json.Marshal(struct {
		Variants []id
		Runner   string
	}{ids, fmt.Sprintf("%T", runner)})
	if err != nil {
		panic(err)
	}
	return "family-" + hash64(b)
}

// targetSpec is a Target as a job carries it: everything but the variant
// (named: the worker has it) and the runner (the worker's own).
type targetSpec struct {
	Variant string                  `json:"variant"`
	Config  sim.Config              `json:"config"`
	Classes []faults.Class          `json:"classes,omitempty"`
	Beyond  []algorithm.Assumption  `json:"beyond,omitempty"`
	World   []envelope.WorldField   `json:"world,omitempty"`
	Plan    *faults.Plan            `json:"plan,omitempty"`
	PCT     *schedule.PCT           `json:"pct,omitempty"`
	Changes []algorithm.WorldChange `json:"changes,omitempty"`
}

func specOf(t seedrun.Target) targetSpec {
	return targetSpec{Variant: t.Variant.Name, Config: t.Config, Classes: t.Classes, Beyond: t.Beyond, World: t.World,
		Plan: t.Plan, PCT: t.PCT, Changes: t.Changes}
}

// target is the spec's Target with variant v and runner r.
func (s targetSpec) target(v algorithm.Variant, r seedrun.Runner) seedrun.Target {
	return seedrun.Target{Variant: v, Config: s.Config, Classes: s.Classes, Beyond: s.Beyond, World: s.World, Plan: s.Plan,
		PCT: s.PCT, Changes: s.Changes, Runner: r}
}

// Job is what the coordinator asks of a worker: seeds to run (with their
// own plans or one given plan), or an exploration's schedules.
type Job struct {
	Target targetSpec      `json:"target"`
	Run    seedrun.Options `json:"run"`
	Seeds  []uint64        `json:"seeds,omitempty"`
	Plan   *faults.Plan    `json:"plan,omitempty"`
	// Verdicts: every run's verdict comes back, not only a failing one's
	// (minimisation keeps violations that are not failures too).
	Verdicts bool `json:"verdicts,omitempty"`
	// Menu and Nodes: schedules of an exploration (Exhaust), each run once.
	Menu  *schedule.Menu `json:"menu,omitempty"`
	Nodes []NodeJob      `json:"nodes,omitempty"`

	t    seedrun.Target // the target, on the coordinator's side
	solo bool           // one seed running again alone: its failure is its own
}

// SeedsJob is a job of seeds of the call's own target, each with its own
// plan.
func SeedsJob(seeds []uint64) Job { return Job{Seeds: seeds} }

// AloneJob is a job of one seed of t under run, with plan (nil: the
// seed's own), that runs alone in a fresh worker, so that its failure is
// its own; verdicts: its verdict comes back even when it passes.
func AloneJob(t seedrun.Target, run seedrun.Options, seed uint64, plan *faults.Plan, verdicts bool) Job {
	return Job{Target: specOf(t), Run: run, t: t, Seeds: []uint64{seed}, Plan: plan, Verdicts: verdicts, solo: true}
}

// NodesJob is a job of schedules of an exploration (Exhaust) of t under
// run, their deviations from menu.
func NodesJob(t seedrun.Target, run seedrun.Options, menu *schedule.Menu, nodes []NodeJob) Job {
	return Job{Target: specOf(t), Run: run, t: t, Menu: menu, Nodes: nodes}
}

// NodeJob is one schedule of an exploration: its deviations, and from
// which branching point on the worker reports the alternatives.
type NodeJob struct {
	Dev  []schedule.Deviation `json:"dev,omitempty"`
	From int                  `json:"from"`
}

// items is how many seeds or schedules the job runs.
func (j Job) items() int { return len(j.Seeds) + len(j.Nodes) }

// from is the job without its first n items.
func (j Job) from(n int) Job {
	if j.Nodes != nil {
		j.Nodes = j.Nodes[n:]
	} else {
		j.Seeds = j.Seeds[n:]
	}
	return j
}

// one is the job of its i-th item alone.
func (j Job) one(i int) Job {
	if j.Nodes != nil {
		j.Nodes = j.Nodes[i : i+1 : i+1]
	} else {
		j.Seeds = j.Seeds[i : i+1 : i+1]
	}
	j.solo = true
	return j
}

// reply is what a worker says of one seed or schedule: enough for the
// sweep's counts and judgement, and a failing run's verdict.
type reply struct {
	seedrun.OutcomeRecord
	Failed bool   `json:"failed,omitempty"`
	Err    string `json:"err,omitempty"`
	// Metrics, when the job kept histories (Options.Keep): what Compare
	// pools of the run.
	Metrics *RunMetrics `json:"metrics,omitempty"`
	// A schedule's: its execution key (seedrun.ExecutionKey) and alternatives.
	Key  uint64 `json:"key,omitempty"`
	Alts []byte `json:"alts,omitempty"`
}

// FindingError is a run whose finding is its worker's (crash, hang,
// memory) or a misuse of the Env: the lock's own code is at fault, not the
// faults, so there is nothing for minimisation to shrink, and the run must
// not run again in this process. Outcome is the finding, in the seed's
// world and plan.
type FindingError struct {
	Outcome seedrun.Outcome
}

func (e *FindingError) Error() string {
	v := e.Outcome.Verdict.Violations[0]
	return fmt.Sprintf("seed %d: %s: %s", e.Outcome.Seed, v.Kind, v.Story)
}
