package isolate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/schedule"
	"github.com/locksim/locksim/sim/seedrun"
)

// ServeIfWorker serves the isolated call named key (Fingerprint), or any
// call of t's variant and runner, when this process is a worker started
// for it, and never returns then. It reports whether this process is a
// worker for another call (which should then do nothing).
func ServeIfWorker(key string, t seedrun.Target) (other bool) {
	return serveFamily(key, []algorithm.Variant{t.Variant}, t.Runner)
}

// serveFamily is ServeIfWorker for a call that knows variants vs, run by
// runner (nil: the kernel).
func serveFamily(key string, vs []algorithm.Variant, runner seedrun.Runner) (other bool) {
	want := os.Getenv(workerEnv)
	if want == "" {
		return false
	}
	if want != key && want != familyKey(vs, runner) {
		return true
	}
	serveWorker(want, vs, runner)
	os.Exit(0)
	return true
}

// serveWorker runs jobs from fd 3 and writes their replies on fd 4 until
// the coordinator closes fd 3; it exits when fd 5 reads end of file (its
// coordinator is gone, however it ended).
func serveWorker(key string, vs []algorithm.Variant, runner seedrun.Runner) {
	jobs, results := os.NewFile(3, "locksim-jobs"), os.NewFile(4, "locksim-results")
	if jobs == nil || results == nil {
		fmt.Fprintln(os.Stderr, "locksim worker: started without its pipes")
		os.Exit(2)
	}
	if parent := os.NewFile(5, "locksim-lifeline"); parent != nil {
		go watchParent(parent)
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
		// Endless recursion is a stack overflow (a crash) within a fraction
		// of a second, not a stack that takes the memory budget, or
		// seconds of copying, first.
		debug.SetMaxStack(int(min(limit/4, maxWorkerStack)))
	}
	w := bufio.NewWriter(results)
	fmt.Fprintf(w, "ready %s\n", key)
	if w.Flush() != nil {
		os.Exit(2)
	}
	dec := json.NewDecoder(bufio.NewReader(jobs))
	enc := json.NewEncoder(w)
	for {
		var j Job
		if err := dec.Decode(&j); err != nil {
			return // the coordinator is done (EOF) or gone
		}
		serveJob(j, vs, runner, func(r reply) {
			if enc.Encode(r) != nil {
				os.Exit(2)
			}
		})
		if w.Flush() != nil {
			os.Exit(2)
		}
	}
}

// serveJob runs j's seeds or schedules and says each one's reply.
func serveJob(j Job, vs []algorithm.Variant, runner seedrun.Runner, say func(reply)) {
	var t seedrun.Target
	found := false
	for _, v := range vs {
		if v.Name == j.Target.Variant {
			t, found = j.Target.target(v, runner), true
		}
	}
	if !found {
		for range j.items() {
			say(reply{Err: fmt.Sprintf("isolation: the worker's call knows no variant %q", j.Target.Variant)})
		}
		return
	}
	if j.Nodes != nil {
		serveNodes(j, t, say)
		return
	}
	for _, seed := range j.Seeds {
		say(serveSeed(t, seed, j))
	}
}

// serveSeed runs one seed of j in this worker.
func serveSeed(t seedrun.Target, seed uint64, j Job) reply {
	run := j.Run
	o, err := Run(t, seed, j.Plan, run, nil)
	if err != nil {
		return reply{OutcomeRecord: seedrun.OutcomeRecord{Seed: seed}, Err: err.Error()}
	}
	r := reply{OutcomeRecord: seedrun.RecordOf(o, o.Failed() || j.Verdicts), Failed: o.Failed()}
	if run.Keep {
		m := MetricsOf(o)
		r.Metrics = &m
	}
	return r
}

// serveNodes runs an exploration's schedules in this worker.
func serveNodes(j Job, t seedrun.Target, say func(reply)) {
	if j.Menu == nil || t.Plan == nil {
		for range j.Nodes {
			say(reply{Err: "isolation: a job of schedules without its menu or plan"})
		}
		return
	}
	run := seedrun.Options{Check: j.Run.Check, Strict: j.Run.Strict}
	var scratch []uint8
	for _, n := range j.Nodes {
		dev := make([]schedule.Deviation, len(n.Dev))
		for i, d := range n.Dev {
			// as an exploration keeps them: a point in 32 bits, an alternative in 8
			dev[i] = schedule.Deviation{Pos: int(int32(d.Pos)), Alt: int(uint8(d.Alt))}
		}
		out, alts, err := seedrun.RunNode(t, schedule.Schedule{Menu: *j.Menu, Deviations: dev}, n.From, run, scratch)
		scratch = alts
		if err != nil {
			say(reply{Err: err.Error()})
			continue
		}
		r := reply{OutcomeRecord: seedrun.OutcomeRecord{Hash: out.Hash, Events: out.Events}, Key: seedrun.ExecutionKey(out), Alts: alts}
		if r.Failed = out.Failed(); r.Failed {
			r.OutcomeRecord = seedrun.RecordOf(out, true)
		}
		say(r)
	}
}

// maxWorkerStack is how far a worker's goroutine stacks may grow (Go's
// default is 1 GiB): a lock's code needs a few KiB; a stack that grows to
// 16 MiB (hundreds of thousands of frames) recurses without end, and Go
// takes about a third of a second to get there, seconds to get to 1 GiB.
const maxWorkerStack = 16 << 20

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

// watchParent ends the worker when its coordinator is gone: the
// coordinator holds the only write end of the pipe parent reads, so the
// read ends when it exits, however it ended (kill -9, a hangup). A worker
// that spins in a seed is preempted for this (one P: within 20 ms or so).
func watchParent(parent *os.File) {
	io.Copy(io.Discard, parent)
	os.Exit(exitOrphan)
}

// RunMetrics is what Compare pools of one run (its row's metrics), when
// the run's history stayed in its worker.
type RunMetrics struct {
	Grants       int     `json:"grants"`
	Availability float64 `json:"availability"`
	Messages     int64   `json:"messages"`
	EndNS        int64   `json:"end_ns"`
	LatenciesNS  []int64 `json:"latencies_ns,omitempty"` // each granted acquire's, call to return
}

// MetricsOf is o's metrics, from its history.
func MetricsOf(o seedrun.Outcome) RunMetrics {
	h := o.History
	m := RunMetrics{Grants: o.Verdict.Metrics.Grants, Availability: o.Verdict.Metrics.Availability, Messages: h.Messages, EndNS: h.End}
	for _, a := range model.Attempts(h) {
		if a.Outcome == model.Granted {
			m.LatenciesNS = append(m.LatenciesNS, a.ReturnTime-a.CallTime)
		}
	}
	return m
}

// MetricsSink takes each run's metrics from the workers, by seed, for a
// caller that keeps histories but gets none back from them (Compare's
// metrics pool): Isolation.WithMetrics.
type MetricsSink struct {
	mu sync.Mutex
	m  map[uint64]RunMetrics
}

func (s *MetricsSink) put(seed uint64, m RunMetrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[uint64]RunMetrics{}
	}
	s.m[seed] = m
}

// Take is seed's metrics, once.
func (s *MetricsSink) Take(seed uint64) (RunMetrics, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[seed]
	delete(s.m, seed)
	return m, ok
}
