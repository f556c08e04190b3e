package isolate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/model"
)

// worker is one worker process, seen from the coordinator.
type worker struct {
	iso      Isolation
	cmd      *exec.Cmd
	jobs     *os.File
	lifeline *os.File    // the write end of the worker's fd 5: never written, closed once it exited
	lines    chan []byte // reply lines; closed when the worker's end closes
	exited   chan struct{}
	stderr   *tailBuffer
	stuck    bool // killed for taking no job within its hang budget (send)
}

// failure is why a worker could not finish a job: the finding's kind and
// what the worker said. outside: it was killed by a signal from outside
// (another process, the system), saying nothing: no fault of its seed's.
type failure struct {
	kind    model.ViolationKind
	detail  string
	outside bool
}

// errWorkerStart is a worker that never reached the isolated call: a
// harness problem (the command does not lead there), not a finding.
var errWorkerStart = errors.New("isolation: the worker did not reach the isolated call")

// ErrNoWorkers wraps every failure to start a worker: the caller may run
// in process instead (locksim -isolate=false).
var ErrNoWorkers = errors.New("no worker process could be started (-isolate=false runs the seeds in this process)")

// workerStarted, when set (by a test), sees each worker's process once it
// started.
var workerStarted func(*os.Process)

// startAttempts is how often a worker killed from outside while it starts
// is started again before the harness gives up.
const startAttempts = 5

// startWorker starts a worker for the calls of key, again when one was
// killed from outside before it was ready.
func startWorker(iso Isolation, key string) (*worker, error) {
	for attempt := 1; ; attempt++ {
		w, f, err := tryStartWorker(iso, key)
		if err == nil || f == nil || !f.outside || attempt == startAttempts {
			return w, err
		}
	}
}

// tryStartWorker starts one worker, and waits for it to say it is ready.
func tryStartWorker(iso Isolation, key string) (*worker, *failure, error) {
	argv := iso.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("isolation: cannot find this program to start workers: %v: %w", err, ErrNoWorkers)
		}
		argv = append([]string{exe}, os.Args[1:]...)
	}
	pipes, err := workerPipes()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{pipes[0], pipes[3], pipes[4]}
	cmd.Env = append(append(os.Environ(), iso.Env...),
		workerEnv+"="+key, workerMemEnv+"="+strconv.FormatInt(iso.memoryLimit(), 10))
	w := &worker{iso: iso, cmd: cmd, jobs: pipes[1], lifeline: pipes[5], lines: make(chan []byte, 64), exited: make(chan struct{}),
		stderr: &tailBuffer{max: 16 << 10}}
	cmd.Stderr = w.stderr
	detach(cmd)
	err = startCmd(cmd)
	for _, child := range []*os.File{pipes[0], pipes[3], pipes[4]} {
		child.Close()
	}
	if err != nil {
		pipes[1].Close()
		pipes[2].Close()
		pipes[5].Close()
		return nil, nil, fmt.Errorf("isolation: cannot start a worker: %v: %w", err, ErrNoWorkers)
	}
	if workerStarted != nil {
		workerStarted(cmd.Process)
	}
	go w.read(pipes[2])
	go func() { cmd.Wait(); w.lifeline.Close(); close(w.exited) }()
	line, f := w.next(iso.startTimeout(), nil)
	if f != nil || string(bytes.TrimSpace(line)) != "ready "+key {
		w.kill()
		<-w.exited
		return nil, f, fmt.Errorf("%w (%s).%s: %w", errWorkerStart, strings.Join(argv, " "), w.saying(), ErrNoWorkers)
	}
	return w, nil, nil
}

// workerPipes are a worker's three pipes, each as read end, write end:
// jobs (the worker reads), results (the worker writes) and its lifeline
// (the worker reads, this process holds the write end until the worker
// exited).
func workerPipes() ([6]*os.File, error) {
	var p [6]*os.File
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range p[:i] {
				f.Close()
			}
			return p, err
		}
		p[i], p[i+1] = r, w
	}
	return p, nil
}

// read hands the worker's reply lines over until its end closes.
func (w *worker) read(results *os.File) {
	defer close(w.lines)
	defer results.Close()
	r := bufio.NewReaderSize(results, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		w.lines <- line
	}
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
		if w.dying() {
			return nil, w.death() // not hung: dying (a stack overflow takes a while to tell)
		}
		w.kill()
		return nil, &failure{kind: model.Hang, detail: fmt.Sprintf("the run did not finish in %s of wall-clock time (-hang-after): a loop that never calls its Env?%s", budget, w.saying())}
	}
}

// dyingGrace is how long a worker that said a panic or fatal error of its
// own may take to exit before it counts as hung after all.
const dyingGrace = 5 * time.Second

// dying reports whether the worker said a panic or fatal error of its own
// and exited within dyingGrace.
func (w *worker) dying() bool {
	out := w.stderr.String()
	if !strings.HasPrefix(out, "panic: ") && !strings.HasPrefix(out, "fatal error: ") &&
		!strings.Contains(out, "\npanic: ") && !strings.Contains(out, "\nfatal error: ") {
		return false
	}
	select {
	case <-w.exited:
		return true
	case <-time.After(dyingGrace):
		return false
	}
}

// saying is what the worker said, to add to a finding ("" if nothing).
func (w *worker) saying() string {
	if words := w.lastWords(); words != "" {
		return " It said: " + words
	}
	return ""
}

// death says how the worker died, once it has.
func (w *worker) death() *failure {
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		w.kill()
		<-w.exited
	}
	out, words := w.stderr.String(), w.lastWords()
	if w.stuck {
		return &failure{kind: model.Hang, detail: fmt.Sprintf("the worker took no job in %s of wall-clock time (-hang-after), running the one before: a loop that never calls its Env?", w.iso.hangAfter())}
	}
	code := -1
	if ps := w.cmd.ProcessState; ps != nil {
		code = ps.ExitCode()
		if sig, ok := killedBy(ps); ok && !strings.Contains(out, "panic: ") && !strings.Contains(out, "fatal error: ") {
			return &failure{kind: model.Crash, outside: true, detail: fmt.Sprintf("the worker was killed by %s from outside, saying nothing (another process, or the system's out-of-memory killer)", sig)}
		}
	}
	switch {
	case code == exitMemory || outOfMemory(out):
		return &failure{kind: model.Memory, detail: fmt.Sprintf("the worker passed its memory limit of %d MiB (-memory-limit): memory allocated without bound?%s", w.iso.memoryLimit()>>20, w.saying())}
	case strings.Contains(out, "fatal error: stack overflow") || strings.Contains(out, "stack exceeds"):
		return &failure{kind: model.Crash, detail: "the worker's stack overflowed (a fatal error, not a panic): endless recursion in the lock?"}
	case misuseWords(words):
		return &failure{kind: model.Misuse, detail: "the worker crashed the way calls to the Env from a goroutine of the lock's own crash it: every Env and Server call must come from the goroutine that runs Acquire or Release"}
	case words == "":
		return &failure{kind: model.Crash, detail: fmt.Sprintf("the worker exited (status %d) in the middle of a run, saying nothing: the lock called os.Exit?", code)}
	case strings.Contains(words, "unexpected call to os.Exit"):
		return &failure{kind: model.Crash, detail: "the worker exited in the middle of a run: the lock called os.Exit"}
	case strings.HasPrefix(words, "panic: "):
		return &failure{kind: model.Crash, detail: fmt.Sprintf("the worker died of a panic no client's goroutine recovered, so in a goroutine the lock started: %s", strings.TrimPrefix(words, "panic: "))}
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

// misuseWords: the worker's last words (the first panic or fatal error)
// are of the simulator's coroutines, one of its own signals, or a map it
// shares: the way a goroutine of the lock's own calling the Env crashes
// it, when the simulator did not see it first.
func misuseWords(words string) bool {
	return strings.Contains(words, "iter.Pull") || strings.Contains(words, "concurrent map") ||
		strings.Contains(words, "coro") || strings.Contains(words, "(sim.")
}

// pointers are what a finding never shows: addresses.
var pointers = regexp.MustCompile(`0x[0-9a-f]{6,}`)

// lastWords is the line of the worker's stderr that says what went wrong:
// the first panic or fatal error, else its last line ("" if it said
// nothing), without addresses.
func (w *worker) lastWords() string {
	out := w.stderr.String()
	words := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "locksim worker: ") {
			words = line
			break
		}
	}
	if words == "" {
		words = strings.TrimSpace(out)
		if i := strings.LastIndexByte(words, '\n'); i >= 0 {
			words = words[i+1:]
		}
	}
	words = strings.TrimSuffix(strings.TrimSpace(words), " [recovered]")
	return strings.TrimSpace(pointers.ReplaceAllString(words, "…"))
}

// send queues j at the worker; a worker that is gone is found out when
// its replies are read. One that takes no job within its hang budget (a
// job bigger than the pipe holds, behind one that hangs) is killed: it
// hung (stuck).
func (w *worker) send(j Job) {
	b, err := json.Marshal(j)
	if err != nil {
		panic(err) // seeds, plans and schedules are plain data
	}
	w.jobs.SetWriteDeadline(time.Now().Add(w.iso.hangAfter()))
	if _, err := w.jobs.Write(append(b, '\n')); errors.Is(err, os.ErrDeadlineExceeded) {
		w.stuck = true
		w.kill()
	}
}

// replies reads the n replies of the oldest job queued, or why they did
// not all come.
func (w *worker) replies(n int, stop <-chan struct{}) ([]reply, *failure) {
	out := make([]reply, 0, n)
	for range n {
		line, f := w.next(w.iso.hangAfter(), stop)
		if f != nil {
			return out, f
		}
		var r reply
		if err := json.Unmarshal(line, &r); err != nil {
			w.kill()
			<-w.exited
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
