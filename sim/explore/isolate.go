package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// Isolation runs seeds in worker processes that a coordinator supervises,
// the way Go's fuzzing engine runs its inputs: the program re-executes
// itself, and the copy serves the seeds once it reaches the same Sweep (or
// RunIsolated) call. A worker that dies, makes no progress for HangAfter,
// or holds more than MemoryLimit of heap is a finding of the seed it was
// running (kinds crash, hang and memory), and the sweep goes on in a fresh
// worker. A bad algorithm can then take down a worker, never the sweep.
//
// The re-executed program must reach the same call with the same target
// and run options (they are fingerprinted): the locksim command does, with
// its own arguments; a test names itself (TestWorkerCommand).
type Isolation struct {
	// Command re-runs the program up to the isolated call: the executable
	// and its arguments. nil: this process's executable and arguments.
	Command []string
	// Env is added to the workers' environment.
	Env []string
	// HangAfter is how long a worker may go without finishing a seed;
	// 0: DefaultHangAfter.
	HangAfter time.Duration
	// MemoryLimit is a worker's heap budget in bytes: the runtime's soft
	// limit (debug.SetMemoryLimit), and the heap at which the worker
	// stops with a memory finding. 0: DefaultMemoryLimit.
	MemoryLimit int64
	// StartTimeout is how long a worker may take to reach the isolated
	// call; 0: DefaultStartTimeout.
	StartTimeout time.Duration
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

// validate checks the budgets.
func (iso Isolation) validate() error {
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
// call it serves, and its memory budget.
const (
	workerEnv    = "LOCKSIM_WORKER"
	workerMemEnv = "LOCKSIM_WORKER_MEMORY"
)

// exitMemory is the status a worker exits with when it passes its budget.
const exitMemory = 86

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

// fingerprint names an isolated call: what its seeds run. A worker serves
// the call whose fingerprint it was started with.
func fingerprint(kind string, t Target, run Options, more ...string) string {
	b, err := json.Marshal(struct {
		Kind, Variant, Summary, Envelope string
		Config                           any
		Classes, Beyond, World           any
		Plan                             *faults.Plan
		PCT                              *PCT
		Run                              Options
		More                             []string
	}{kind, t.Variant.Name, t.Variant.Summary, fmt.Sprint(t.Variant.Envelope), t.Config, t.Classes, t.Beyond, t.World, t.Plan, t.PCT, run, more})
	if err != nil {
		panic(err) // configs, classes and options are plain data
	}
	h := fnv.New64a()
	h.Write(b)
	return kind + "-" + strconv.FormatUint(h.Sum64(), 16)
}

// job is what the coordinator asks of a worker: seeds to run, with their
// own plans or one given plan.
type job struct {
	Seeds []uint64     `json:"seeds"`
	Plan  *faults.Plan `json:"plan,omitempty"`
}

// outcomeRecord is the part of an Outcome that travels as JSON, from a
// worker or into a journal: no history or trace, and no world or plan,
// which the seed draws again.
type outcomeRecord struct {
	Seed     uint64         `json:"seed"`
	Hash     uint64         `json:"hash"`
	Events   int64          `json:"events"`
	Verdict  *model.Verdict `json:"verdict,omitempty"`
	Findings []Finding      `json:"findings,omitempty"`
	Breaches []Breach       `json:"breaches,omitempty"`
}

// recordOf is o's record, with its verdict when withVerdict.
func recordOf(o Outcome, withVerdict bool) outcomeRecord {
	r := outcomeRecord{Seed: o.Seed, Hash: o.Hash, Events: o.Events, Findings: o.Findings, Breaches: o.Breaches}
	if withVerdict {
		r.Verdict = &o.Verdict
	}
	return r
}

// outcome is the record's Outcome under run options run, in target t's
// world for the seed and with plan (nil: the seed's own) when world.
func (rec outcomeRecord) outcome(t Target, plan *faults.Plan, run Options, world bool) Outcome {
	o := Outcome{Seed: rec.Seed, Hash: rec.Hash, Events: rec.Events, Findings: rec.Findings, Breaches: rec.Breaches,
		strict: run.Strict, check: run.Check}
	if rec.Verdict != nil {
		o.Verdict = *rec.Verdict
	}
	if world {
		at := t.At(rec.Seed)
		o.Config = at.Config
		if plan != nil {
			o.Plan = *plan
		} else {
			o.Plan = at.PlanFor(rec.Seed)
		}
	}
	return o
}

// misusedEnv: the run's algorithm called its Env from a goroutine of its
// own, so running it again could take this process down.
func (o Outcome) misusedEnv() bool {
	return o.count(func(f Finding) bool { return f.Kind == model.Misuse }) > 0
}

// seedReply is what a worker says of one seed: enough for the sweep's
// counts and judgement, and a failing seed's verdict.
type seedReply struct {
	outcomeRecord
	Failed bool   `json:"failed,omitempty"`
	Err    string `json:"err,omitempty"`
}

// serveIfWorker serves the isolated call named key when this process is
// a worker started for it, and never returns then. It reports whether this
// process is a worker for another call (which should then do nothing).
func serveIfWorker(key string, t Target, run Options) (other bool) {
	want := os.Getenv(workerEnv)
	if want == "" {
		return false
	}
	if want != key {
		return true
	}
	serveWorker(key, t, run)
	os.Exit(0)
	return true
}

// serveWorker runs jobs from fd 3 and writes their replies on fd 4 until
// the coordinator closes fd 3.
func serveWorker(key string, t Target, run Options) {
	jobs, results := os.NewFile(3, "locksim-jobs"), os.NewFile(4, "locksim-results")
	if jobs == nil || results == nil {
		fmt.Fprintln(os.Stderr, "locksim worker: started without its pipes")
		os.Exit(2)
	}
	// A worker runs one seed at a time. With more Ps, the collector's idle
	// mark workers ran on the idle ones, taking the core another worker
	// needed: isolated sweeps cost 5% more CPU until this.
	runtime.GOMAXPROCS(1)
	limit, _ := strconv.ParseInt(os.Getenv(workerMemEnv), 10, 64)
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		hardMemoryLimit(limit)
		go watchMemory(limit)
	}
	w := bufio.NewWriter(results)
	fmt.Fprintf(w, "ready %s\n", key)
	if w.Flush() != nil {
		os.Exit(2)
	}
	dec := json.NewDecoder(bufio.NewReader(jobs))
	enc := json.NewEncoder(w)
	for {
		var j job
		if err := dec.Decode(&j); err != nil {
			return // the coordinator is done (EOF) or gone
		}
		for _, seed := range j.Seeds {
			var o Outcome
			var err error
			if j.Plan != nil {
				o, err = RunPlan(t, seed, *j.Plan, run)
			} else {
				o, err = RunSeed(t, seed, run)
			}
			r := seedReply{outcomeRecord: recordOf(o, o.Failed()), Failed: o.Failed()}
			if err != nil {
				r = seedReply{outcomeRecord: outcomeRecord{Seed: seed}, Err: err.Error()}
			}
			if enc.Encode(r) != nil {
				os.Exit(2)
			}
		}
		if w.Flush() != nil {
			os.Exit(2)
		}
	}
}

// watchMemory ends the worker once its heap passes limit: the runtime's
// soft limit makes the collector work harder first, this is the hard one.
func watchMemory(limit int64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		time.Sleep(10 * time.Millisecond)
		metrics.Read(s)
		if used := int64(s[0].Value.Uint64()); used > limit {
			fmt.Fprintf(os.Stderr, "locksim worker: heap of %d MiB passed the memory limit of %d MiB\n", used>>20, limit>>20)
			os.Exit(exitMemory)
		}
	}
}

// worker is one worker process, seen from the coordinator.
type worker struct {
	iso    Isolation
	cmd    *exec.Cmd
	jobs   *os.File
	lines  chan []byte // reply lines; closed when the worker's end closes
	exited chan struct{}
	stderr *tailBuffer
}

// failure is why a worker could not finish a job: the finding's kind and
// what the worker said.
type failure struct {
	kind   model.ViolationKind
	detail string
}

// errWorkerStart is a worker that never reached the isolated call: a
// harness problem (the command does not lead there), not a finding.
var errWorkerStart = errors.New("isolation: the worker did not reach the isolated call")

// ErrNoWorkers wraps every failure to start a worker: the caller may run
// in process instead (locksim -isolate=false).
var ErrNoWorkers = errors.New("no worker process could be started (-isolate=false runs the seeds in this process)")

func startWorker(iso Isolation, key string) (*worker, error) {
	argv := iso.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("isolation: cannot find this program to start workers: %v: %w", err, ErrNoWorkers)
		}
		argv = append([]string{exe}, os.Args[1:]...)
	}
	jobsR, jobsW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		jobsR.Close()
		jobsW.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{jobsR, resW}
	cmd.Env = append(append(os.Environ(), iso.Env...),
		workerEnv+"="+key, workerMemEnv+"="+strconv.FormatInt(iso.memoryLimit(), 10))
	w := &worker{iso: iso, cmd: cmd, jobs: jobsW, lines: make(chan []byte, 64), exited: make(chan struct{}), stderr: &tailBuffer{max: 16 << 10}}
	cmd.Stderr = w.stderr
	detach(cmd)
	err = cmd.Start()
	jobsR.Close()
	resW.Close()
	if err != nil {
		jobsW.Close()
		resR.Close()
		return nil, fmt.Errorf("isolation: cannot start a worker: %v: %w", err, ErrNoWorkers)
	}
	go func() {
		defer close(w.lines)
		r := bufio.NewReaderSize(resR, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				resR.Close()
				return
			}
			w.lines <- line
		}
	}()
	go func() { cmd.Wait(); close(w.exited) }()
	line, f := w.next(iso.startTimeout(), nil)
	if f != nil || string(bytes.TrimSpace(line)) != "ready "+key {
		w.kill()
		return nil, fmt.Errorf("%w (%s): %s: %w", errWorkerStart, strings.Join(argv, " "), w.lastWords(), ErrNoWorkers)
	}
	return w, nil
}

// errStopped is a job abandoned because the sweep was stopped.
var errStopped = &failure{}

// next is the worker's next line, or why none came within budget.
func (w *worker) next(budget time.Duration, stop <-chan struct{}) ([]byte, *failure) {
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case <-stop:
		w.kill()
		return nil, errStopped
	case line, ok := <-w.lines:
		if ok {
			return line, nil
		}
		return nil, w.death()
	case <-timer.C:
		w.kill()
		return nil, &failure{kind: model.Hang, detail: fmt.Sprintf("no seed finished in %s of wall-clock time: a loop that never calls its Env? %s", budget, w.lastWords())}
	}
}

// death says how the worker died, once it has.
func (w *worker) death() *failure {
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		w.kill()
	}
	words := w.lastWords()
	code := -1
	if ps := w.cmd.ProcessState; ps != nil {
		code = ps.ExitCode()
	}
	switch {
	case code == exitMemory || outOfMemory(w.stderr.String()):
		return &failure{kind: model.Memory, detail: fmt.Sprintf("the worker passed its memory limit of %d MiB: %s", w.iso.memoryLimit()>>20, words)}
	case strings.Contains(words, "iter.Pull") || strings.Contains(words, "concurrent map"):
		return &failure{kind: model.Misuse, detail: "the worker crashed the way Env calls from a goroutine of the algorithm's own crash it: " + words}
	}
	return &failure{kind: model.Crash, detail: fmt.Sprintf("the worker died (exit status %d): %s", code, words)}
}

// outOfMemory: the worker's output says it could not get memory (the Go
// runtime's words, "fatal error: runtime: out of memory" or "out of memory
// allocating heap arena metadata", or the race detector's).
func outOfMemory(out string) bool {
	return strings.Contains(out, "out of memory") || strings.Contains(out, "failed to allocate") ||
		strings.Contains(out, "cannot allocate memory")
}

// lastWords is the line of the worker's stderr that says what went wrong:
// the first panic or fatal error, else its last line.
func (w *worker) lastWords() string {
	out := w.stderr.String()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "locksim worker: ") {
			return strings.TrimSpace(line)
		}
	}
	out = strings.TrimSpace(out)
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if out == "" {
		return "it said nothing"
	}
	return out
}

// send queues j at the worker; a worker that is gone is found out when
// its replies are read.
func (w *worker) send(j job) {
	b, err := json.Marshal(j)
	if err != nil {
		panic(err) // seeds and plans are plain data
	}
	w.jobs.Write(append(b, '\n'))
}

// replies reads the n replies of the oldest job queued, or why they did
// not all come.
func (w *worker) replies(n int, stop <-chan struct{}) ([]seedReply, *failure) {
	out := make([]seedReply, 0, n)
	for range n {
		line, f := w.next(w.iso.hangAfter(), stop)
		if f != nil {
			return out, f
		}
		var r seedReply
		if err := json.Unmarshal(line, &r); err != nil {
			w.kill()
			return out, &failure{kind: model.Crash, detail: fmt.Sprintf("the worker wrote %q, not a result: something in the run writes to fd 4", bytes.TrimSpace(line))}
		}
		out = append(out, r)
	}
	return out, nil
}

func (w *worker) kill() {
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
}

// close ends the worker: it exits when its jobs pipe closes.
func (w *worker) close() {
	w.jobs.Close()
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		w.kill()
		<-w.exited
	}
}

// tailBuffer keeps the first and the last bytes written to it: a panic's
// first line, and how the output ended.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	head []byte
	tail []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.max - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > b.max {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.max:]...)
	}
	return n, nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.head) + string(b.tail)
}

var _ io.Writer = (*tailBuffer)(nil)

// isolated runs seeds of one target in a worker process, and starts a
// fresh worker after one fails. Jobs are queued ahead (send), so the
// worker starts the next chunk while the coordinator reads the last one's
// replies (collect): waiting for each round trip left the worker idle
// and cost the sweep several percent.
type isolated struct {
	iso    Isolation
	key    string
	t      Target
	run    Options
	w      *worker
	queued []job // sent to w, replies not read yet
}

// seedResult is one seed's outcome; byWorker: a finding of the worker
// itself (crash, hang, memory, misuse), with no run behind it.
type seedResult struct {
	out      Outcome
	err      error
	byWorker bool
}

// seeds runs seeds (each with plan, or its own when nil) and returns their
// results in order (see collect).
func (r *isolated) seeds(seeds []uint64, plan *faults.Plan, stop <-chan struct{}) ([]seedResult, error) {
	if err := r.send(job{Seeds: seeds, Plan: plan}); err != nil {
		return nil, err
	}
	return r.collect(stop)
}

// send queues j at the worker, starting one if there is none.
func (r *isolated) send(j job) error {
	if r.w == nil {
		w, err := startWorker(r.iso, r.key)
		if err != nil {
			return err
		}
		r.w = w
	}
	r.w.send(j)
	r.queued = append(r.queued, j)
	return nil
}

// collect returns the results of the oldest job sent, in seed order: all
// of them, unless stop closed first or the harness failed (err). A job
// whose worker failed runs again one seed at a time in fresh workers, so
// the finding names the seed that fails alone (seeds that pass alone pass:
// a failure only a chunk shows is not attributed), and the jobs queued
// behind it are sent again.
func (r *isolated) collect(stop <-chan struct{}) ([]seedResult, error) {
	j := r.queued[0]
	replies, f := r.w.replies(len(j.Seeds), stop)
	out := r.results(replies, j.Plan)
	if f == nil {
		r.queued = r.queued[1:]
		return out, nil
	}
	lost := r.queued[1:]
	r.queued = nil
	r.w.kill()
	<-r.w.exited
	r.w = nil
	if f == errStopped {
		return out, nil
	}
	rest := j.Seeds[len(replies):]
	if len(rest) == 1 {
		out = append(out, r.finding(rest[0], j.Plan, f))
	} else {
		for _, s := range rest {
			one, err := r.seeds([]uint64{s}, j.Plan, stop)
			out = append(out, one...)
			if err != nil || len(one) == 0 {
				return out, err // stopped, or the harness failed
			}
		}
	}
	for _, l := range lost {
		if err := r.send(l); err != nil {
			return out, err
		}
	}
	return out, nil
}

// results turns replies into outcomes: seed, hash, events, findings and
// breaches; with findings, their world and plan; a failing seed's verdict.
// A failing seed whose history or trace is asked for runs again here (a
// run is deterministic), unless it misused its Env, which could take this
// process down.
func (r *isolated) results(replies []seedReply, plan *faults.Plan) []seedResult {
	out := make([]seedResult, 0, len(replies))
	for _, rep := range replies {
		if rep.Err != "" {
			out = append(out, seedResult{err: errors.New(rep.Err)})
			continue
		}
		o := rep.outcome(r.t, plan, r.run, len(rep.Findings) > 0 || rep.Failed)
		if rep.Failed && (r.run.Keep || r.run.Trace) && !o.misusedEnv() {
			var err error
			o, err = Run(r.t, rep.Seed, plan, r.run, nil)
			out = append(out, seedResult{out: o, err: err})
			continue
		}
		out = append(out, seedResult{out: o})
	}
	return out
}

// finding is the outcome of a seed whose worker failed: one violation of
// the failure's kind, which every variant promises against.
func (r *isolated) finding(seed uint64, plan *faults.Plan, f *failure) seedResult {
	return seedResult{out: failureOutcome(r.t, seed, plan, r.run, f), byWorker: true}
}

// failureOutcome is the outcome of a run that never ended normally (its
// worker crashed, or it hung): one violation of f's kind, which every
// variant promises against, and no history.
func failureOutcome(t Target, seed uint64, plan *faults.Plan, run Options, f *failure) Outcome {
	v := model.Verdict{Violations: []model.Violation{{Kind: f.kind, Clients: []int{}, Story: f.detail}}}
	o := outcomeRecord{Seed: seed, Verdict: &v}.outcome(t, plan, run, true)
	o.Findings = Classify(t.Variant.Envelope, v, nil, 0)
	return o
}

func (r *isolated) close() {
	if r.w != nil {
		r.w.close()
		r.w = nil
	}
}

// Run runs one seed with plan (nil: the seed's own), in a worker process
// when iso is set (RunIsolated), else here: what a command or a test that
// replays one seed calls.
func Run(t Target, seed uint64, plan *faults.Plan, opt Options, iso *Isolation) (Outcome, error) {
	switch {
	case iso != nil:
		return RunIsolated(t, seed, plan, opt, *iso)
	case plan != nil:
		return RunPlan(t, seed, *plan, opt)
	}
	return RunSeed(t, seed, opt)
}

// RunIsolated runs one seed with plan (nil: the seed's own) in a worker
// process, as a sweep with Isolation would: a crash, hang or memory
// finding is returned as the outcome. Otherwise the seed runs again here,
// so the outcome is whole (history and trace as opt asks).
func RunIsolated(t Target, seed uint64, plan *faults.Plan, opt Options, iso Isolation) (Outcome, error) {
	if err := iso.validate(); err != nil {
		return Outcome{}, err
	}
	key := fingerprint("run", t, opt)
	if serveIfWorker(key, t, opt) {
		return Outcome{}, errors.New("isolation: this process is a worker for another call")
	}
	r := &isolated{iso: iso, key: key, t: t, run: opt}
	defer r.close()
	rs, err := r.seeds([]uint64{seed}, plan, nil)
	if err != nil {
		return Outcome{}, err
	}
	if rs[0].err != nil || rs[0].byWorker || rs[0].out.misusedEnv() {
		return rs[0].out, rs[0].err
	}
	return Run(r.t, seed, plan, opt, nil)
}
