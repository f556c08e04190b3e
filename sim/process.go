package sim

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// process is one client thread: a coroutine (iter.Pull) running the workload
// and the algorithm in blocking style. It yields whenever it waits (an RPC,
// a sleep) and the event loop resumes it with the result. Exactly one
// process runs at a time, so nothing here needs a lock.
type process struct {
	w        *world
	idx      int
	host     int
	name     string
	lock     algorithm.Lock // inner, as the workload calls it (ownLock)
	inner    algorithm.Lock // the variant's
	workRand stream         // think and hold times
	algoRand *rand.Rand     // handed to the algorithm via Env.Rand

	// others: at the last call, the process had more goroutines than
	// carriers and the run's baseline (world.startedGoroutines). An Env
	// call made while the process has the turn then walks the caller's
	// stack (onCarrier): it may come from a goroutine of the algorithm.
	others bool

	c       *carrier // the coroutine that runs the process's body
	started bool     // c has run it
	yield   func(struct{}) bool

	// What the process waits for. An RPC resolves once: by its reply or its
	// timeout, whichever comes first.
	call uint64
	// res is the resolved call's reply, nil until the call in flight
	// resolves. It points where the reply arrived, in its message slot: the
	// slot is freed on delivery but not reused before the process reads it,
	// since the process runs as soon as that event is done. A paused process
	// runs later, so its reply is copied to held first.
	res     *reply
	held    reply
	sleepID uint64
	// deadline is when the call in flight times out (0: it has no timeout).
	// A process keeps at most one timeout event queued, at timerAt (0: none),
	// never later than deadline: one per RPC would fill the queue with
	// stale timeouts of calls long answered.
	deadline int64
	timerAt  int64

	pausedUntil   int64
	pendingResume bool
	acquirePause  int64 // a timed pause waiting for the next server call inside Acquire, ns
	deletePause   int64 // a timed pause waiting for the next delete inside Acquire, ns

	steps  int64 // env calls since the last yield
	calls  int64 // server calls in this operation since the last sleep
	done   bool
	killed bool

	// The hold the workload is in, if any.
	holding     bool
	holdID      uint64
	beliefEnded bool
	validUntil  int64      // true time the hold's validity ends; 0: it has none
	validLocal  reading    // the same on the host's clock (the grant's ValidUntil)
	grantEvent  int        // the index of the hold's AcquireReturn in the history
	openOp      model.Kind // the operation whose return is pending (0: none)

	servers  []algorithm.Server // one stub per node, made once
	viewGen  int                // the topology generation this client knows of
	topo     [3]topoEntry       // the views it built last (topologyView)
	topoNext int
}

// timedOut is the reply of every call that timed out. No one writes to it.
var timedOut = reply{err: errServerDown}

// Signals thrown through client code to unwind it.
type killedSignal struct{}
type livelockSignal struct{}
type misuseSignal struct{} // another goroutine misused the Env: end the run
type endlessCallsSignal struct{}

func newProcess(w *world, idx, host int, name string, seed uint64) *process {
	p := &process{w: w, idx: idx, host: host, name: name,
		workRand: newStream(seed, streamWorkload+uint64(idx)),
		algoRand: newAlgoStream(seed, streamAlgo+uint64(idx)),
	}
	p.inner = p.newLock()
	p.lock = (*ownLock)(p)
	p.servers = make([]algorithm.Server, len(w.nodes))
	for i := range p.servers {
		p.servers[i] = &serverStub{p: p, node: i}
	}
	p.c = w.carrier()
	p.c.p, p.c.ended = p, false
	return p
}

// carrier is a coroutine that runs processes' bodies, one after another.
// A run's processes borrow carriers from its Buffers, so that a coroutine
// whose stack grew in one run keeps it for the next: making two
// coroutines and growing their stacks was a tenth of a small run's cost.
// A carrier is between processes only once the body it ran has returned
// (its process ended, or was killed and unwound).
type carrier struct {
	next  func() (struct{}, bool)
	stop  func()
	p     *process // the process it runs now
	ended bool     // p's body has returned: the carrier waits for the next
	// turn is the process whose body has the turn: set by resume while the
	// loop waits for the coroutine, cleared when the coroutine hands the
	// turn back, and lostTurn once a goroutine of the algorithm handed it
	// back in the coroutine's place (process.misused): such a carrier is
	// never resumed, stopped or kept again.
	turn atomic.Pointer[process]
}

// lostTurn marks a carrier whose turn a goroutine of the algorithm took.
var lostTurn = new(process)

func newCarrier() *carrier {
	c := &carrier{}
	next, stop := iter.Pull(c.loop)
	liveCarriers.Add(1)
	c.next = next
	c.stop = func() {
		if c.next != nil {
			stop()
			c.next = nil
			liveCarriers.Add(-1)
		}
	}
	return c
}

// liveCarriers counts the carriers' coroutines not stopped yet: the
// goroutines of every run's clients, in this process (lost ones too).
var liveCarriers atomic.Int64

// othersNow is how many goroutines the process has that are not carriers:
// the count of a run's own goroutines moves when its algorithm starts
// one, not when other runs of the process start or stop their clients.
func othersNow() int64 { return int64(runtime.NumGoroutine()) - liveCarriers.Load() }

func (c *carrier) loop(yield func(struct{}) bool) {
	for {
		c.p.body(yield)
		c.ended = true
		if !c.handBack(yield) {
			return
		}
	}
}

// resume switches to the coroutine until it hands the turn back; false
// when it ended for good (stopped) or lost its turn.
func (c *carrier) resume() bool {
	c.turn.Store(c.p)
	_, ok := c.next()
	return ok && !c.lost()
}

// handBack gives the loop its turn back, from the coroutine, and returns
// what yield does. A coroutine whose turn was taken (lost) must never touch
// the world again: it waits forever.
func (c *carrier) handBack(yield func(struct{}) bool) bool {
	if !c.turn.CompareAndSwap(c.p, nil) {
		select {}
	}
	return yield(struct{}{})
}

// lost reports whether a goroutine of the algorithm took the carrier's turn.
func (c *carrier) lost() bool { return c.turn.Load() == lostTurn }

// carrier is a carrier for a new process: one the Buffers kept, or new.
func (w *world) carrier() *carrier {
	if n := len(w.carriers); n > 0 {
		c := w.carriers[n-1]
		w.carriers = w.carriers[:n-1]
		return c
	}
	return newCarrier()
}

// newLock calls the variant's constructor; one that panics ends the run
// with a panic finding (the loop never starts), like a panic in Acquire.
func (p *process) newLock() (l algorithm.Lock) {
	defer func() {
		if r := recover(); r != nil && p.w.abort == nil {
			p.w.abort = &model.Abort{Kind: model.Panic, Client: p.idx, Time: 0,
				Detail: fmt.Sprintf("%s: variant %q's New panicked: %v\n%s", p.name, p.w.variant.Name, r, debug.Stack())}
		}
	}()
	return p.w.variant.New()
}

// body is the coroutine. Panics in client code are caught here and turned
// into a finding; the harness never crashes on a bad algorithm.
func (p *process) body(yield func(struct{}) bool) {
	p.yield = yield
	returned := false
	defer func() {
		r := recover()
		if p.c.lost() {
			select {} // the run went on without this coroutine: touch nothing
		}
		if r != nil && p.w.inEvents {
			panic(r) // a simulator bug in an event handler: not the client's
		}
		if r == nil && !returned {
			p.goexited()
		}
		p.unwound(r)
	}()
	p.workload()
	returned = true
}

// unwound records what ended the body, if it was a finding: recovered
// from client code (nil: it returned, or was killed).
func (p *process) unwound(r any) {
	switch r.(type) {
	case nil, killedSignal:
	case misuseSignal:
		p.w.abort = p.w.misuse.Load()
		p.w.abort.Time = p.w.now
	case endlessCallsSignal:
		op := "Acquire"
		if p.openOp == model.ReleaseCall {
			op = "Release"
		}
		p.w.abort = &model.Abort{Kind: model.Livelock, Client: p.idx, Time: p.w.now,
			Detail: fmt.Sprintf("%s made %d server calls in one %s without sleeping or returning, by %s: virtual time passed, but the client had no event (an endless loop of calls?)",
				p.name, p.calls-1, op, fmtTime(p.w.now))}
	case livelockSignal:
		p.w.abort = &model.Abort{Kind: model.Livelock, Client: p.idx, Time: p.w.now,
			Detail: fmt.Sprintf("%s made %d calls without waiting for anything (an endless loop?)", p.name, p.w.cfg.MaxStepsNoYield)}
	default:
		p.w.abort = &model.Abort{Kind: model.Panic, Client: p.idx, Time: p.w.now,
			Detail: fmt.Sprintf("%s panicked: %v\n%s", p.name, r, debug.Stack())}
	}
}

// goexited: the algorithm called runtime.Goexit on the client's goroutine.
// Run to its end, the Goexit would end the goroutine running the
// simulation too (iter.Pull passes it on to whoever resumed the
// coroutine), so the run ends here with a panic finding, and the
// coroutine, in the middle of its Goexit, hands the turn back and is never
// resumed: its carrier is lost.
func (p *process) goexited() {
	if p.w.abort == nil {
		p.w.abort = &model.Abort{Kind: model.Panic, Client: p.idx, Time: p.w.now,
			Detail: fmt.Sprintf("%s called runtime.Goexit in %s: Acquire and Release must return (or panic), never end their goroutine", p.name, opName(p.openOp))}
	}
	p.c.turn.Store(lostTurn)
	p.yield(struct{}{})
	select {}
}

// opName is the lock operation op in words.
func opName(op model.Kind) string {
	if op == model.ReleaseCall {
		return "Release"
	}
	return "Acquire"
}

// during says which lock operation the client was in, if any.
func during(op model.Kind) string {
	if op == 0 {
		return ""
	}
	return ", during " + opName(op)
}

// ownLock is the process's lock as the workload calls it: when the
// variant's code returns, the turn must still be its client's (see back).
type ownLock process

func (o *ownLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	p := (*process)(o)
	g := p.inner.Acquire(env, key)
	p.back()
	return g
}

func (o *ownLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	p := (*process)(o)
	p.inner.Release(env, key, g)
	p.back()
}

// back checks, as the algorithm's code returns to the simulator's, that
// the run may go on: not when a goroutine of the algorithm misused the
// Env meanwhile (the run ends with it, before anything more is recorded),
// and never on a coroutine whose turn was taken.
func (p *process) back() {
	if p.c.lost() {
		select {}
	}
	if p.w.misuse.Load() != nil {
		panic(misuseSignal{})
	}
}

// block waits until an event wakes the process. Meanwhile the process's
// coroutine runs the events itself: when the event that wakes a process is
// its own (about three times in four), it carries on at once, without the
// two coroutine switches of yielding to loop and being resumed. Otherwise it
// hands the woken process over to loop and yields.
func (p *process) block() {
	p.steps = 0
	if p.killed {
		panic(killedSignal{})
	}
	if p.others {
		// The client waits: what the lock's own goroutines do meanwhile
		// happens now, before time moves on. One that calls the Env takes
		// this coroutine's turn (misused), and this one must stop here.
		letRun(p.w)
		if p.c.lost() {
			select {}
		}
	}
	if p.w.misuse.Load() != nil {
		panic(misuseSignal{})
	}
	next := p.w.runEvents()
	if next == p {
		return
	}
	p.w.handoff = next
	if !p.c.handBack(p.yield) || p.killed {
		panic(killedSignal{})
	}
}

// resume has the process run once the current event is done: events wake a
// process as their last act, and whoever runs the events (loop or a blocked
// process) switches to it then.
func (p *process) resume() {
	if p.done || p.killed {
		return
	}
	if p.w.woken != nil {
		panic("sim: one event woke two processes")
	}
	p.w.woken = p
}

// run switches to the process until it hands over (see block) or ends.
func (p *process) run() {
	if p.done || p.killed {
		return
	}
	p.w.onCPU = p
	p.started = true
	ok := p.c.resume()
	p.w.onCPU = nil
	if !ok || p.c.ended {
		p.done = true
	}
	if p.c.lost() {
		p.w.endOnMisuse()
	}
}

// wake resumes the process now, or when its pause ends.
func (p *process) wake() {
	if p.w.now < p.pausedUntil {
		p.pendingResume = true
		return
	}
	p.resume()
}

func (p *process) pause(until int64) {
	if until > p.pausedUntil {
		p.pausedUntil = until
		p.w.q.push(until, evResume, int32(p.idx), 0)
	}
}

func (p *process) unpause() {
	if p.pendingResume && p.w.now >= p.pausedUntil {
		p.pendingResume = false
		p.resume()
	}
}

// kill stops the process: one that is blocked unwinds (block panics with
// killedSignal, which body recovers), and its carrier waits for the next.
func (p *process) kill() {
	p.killed = true
	if p.started && !p.done {
		p.w.onCPU = p
		p.c.resume()
		p.w.onCPU = nil
	}
	p.done = true
}

// step counts an env call; a process that never yields is a livelock finding.
func (p *process) step() {
	// Whether the algorithm may have goroutines of its own is asked once
	// a call: block, which always follows a step, reads the answer here.
	p.others = p.w.startedGoroutines()
	if p.w.onCPU != p || p.others && !onCarrier() {
		p.misused()
	}
	if p.killed {
		panic(killedSignal{})
	}
	if p.w.misuse.Load() != nil {
		panic(misuseSignal{}) // a goroutine of the algorithm misused the Env: the run ends
	}
	p.steps++
	if p.steps > p.w.cfg.MaxStepsNoYield {
		panic(livelockSignal{})
	}
}

// carrierLoop is where every coroutine's stack starts (below iter.Pull's
// own frames): a goroutine whose stack has no carrier.loop is not one.
var carrierLoop uintptr

func init() { carrierLoop = reflect.ValueOf((*carrier).loop).Pointer() }

// onCarrier reports whether the calling goroutine is a carrier's coroutine.
func onCarrier() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(1, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	for i := len(pcs) - 1; i >= 0; i-- { // the loop is near the bottom
		if f := runtime.FuncForPC(pcs[i] - 1); f != nil && f.Entry() == carrierLoop {
			return true
		}
	}
	return false
}

// misused is an Env call from a goroutine the algorithm started: the
// simulator runs one client at a time, so such a call would race with it.
// The first is recorded, and the run ends with a Misuse finding; the
// calling goroutine never returns to the algorithm. When it called while
// its client's coroutine had the turn (that coroutine runs, or waits in
// the algorithm's code, for this very goroutine perhaps), it takes the
// coroutine's place and hands the loop its turn back, so the run ends now
// whatever the coroutine waits for; that carrier is lost (never resumed).
// Otherwise it exits (running its deferred calls), and the run ends at
// the next event or Env call.
func (p *process) misused() {
	p.w.misuse.CompareAndSwap(nil, &model.Abort{Kind: model.Misuse, Client: p.idx,
		Detail: fmt.Sprintf("%s's lock called %s from a goroutine it started%s; every Env and Server call must come from the goroutine that runs Acquire or Release",
			p.name, misusedCall(), during(p.openOp))})
	if p.c.turn.CompareAndSwap(p, lostTurn) {
		p.yield(struct{}{})
		select {} // never resumed
	}
	if p.c.lost() {
		select {} // the coroutine whose turn was taken, or another goroutine: touch nothing
	}
	runtime.Goexit()
}

// misusedCall names the Env or Server method a misused() call came from.
func misusedCall() string {
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		name := f.Function[strings.LastIndexByte(f.Function, '.')+1:]
		switch {
		case strings.Contains(f.Function, "(*serverStub)."):
			return "Server." + name
		case strings.Contains(f.Function, "(*process).") && name != "" && name[0] >= 'A' && name[0] <= 'Z':
			return "Env." + name
		}
		if !more {
			return "its Env"
		}
	}
}

// rpc sends a request to node ni and blocks until its reply or timeout. The
// reply stays valid until the process's next call.
func (p *process) rpc(ni int, r request) *reply {
	p.step()
	if p.calls++; p.calls > p.w.maxCalls && p.openOp != 0 {
		panic(endlessCallsSignal{})
	}
	if p.acquirePause > 0 && p.openOp == model.AcquireCall && p.w.chance(Choice{Kind: ChoiceStrike, Client: p.idx, Node: ni}, acquirePauseStrikePPM) {
		p.pauseAt(&p.acquirePause, faults.InAcquire)
	}
	if p.deletePause > 0 && p.openOp == model.AcquireCall && (r.op == opRemove || r.op == opCompareAndDelete) {
		p.pauseAt(&p.deletePause, faults.BeforeDelete)
	}
	if p.w.inject != nil { // nil but in a systematic exploration
		p.offer(Step{Node: ni})
	}
	w := p.w
	p.call++
	p.res = nil
	i := w.newMsg()
	m := &w.msgs[i]
	m.from, m.to, m.call, m.isReply = clientEndpoint(p.idx), endpoint(ni), p.call, false
	m.req = r
	w.send(i)
	p.deadline = w.now + int64(w.cfg.RPCTimeout)
	if p.timerAt == 0 {
		p.timerAt = p.deadline
		w.q.push(p.deadline, evTimeout, int32(p.idx), 0)
	}
	p.block()
	return p.res
}

func (p *process) replyArrived(call uint64, r *reply) {
	if call != p.call || p.res != nil {
		return // a duplicate, or the reply to a call that already timed out
	}
	if p.deadline != 0 && p.w.now >= p.deadline {
		return // too late: the timeout wins a tie; the timer resolves the call
	}
	p.resolve(r)
}

// resolve settles the call in flight with reply r and wakes the process.
// A paused process runs only when its pause ends (see wake), and by then
// r's message slot may be reused, so it keeps a copy.
func (p *process) resolve(r *reply) {
	if p.w.now < p.pausedUntil {
		p.held = *r
		r = &p.held
	}
	p.res = r
	p.wake()
}

// timerFired handles the process's timeout event: it times out the call in
// flight if its deadline has come, or re-arms for the deadline of a later call.
func (p *process) timerFired() {
	p.timerAt = 0
	if p.res != nil || p.deadline == 0 {
		return
	}
	if p.w.now < p.deadline {
		p.timerAt = p.deadline
		p.w.q.push(p.deadline, evTimeout, int32(p.idx), 0)
		return
	}
	if p.w.tracing {
		p.w.note("%s: rpc #%d timed out", p.name, p.call)
	}
	p.resolve(&timedOut)
}

func (p *process) sleep(d int64) {
	p.step()
	p.calls = 0
	if d < 0 {
		d = 0
	}
	p.sleepID++
	p.w.q.push(p.w.now+d, evWake, int32(p.idx), p.sleepID)
	p.block()
}

func (p *process) wakeFromSleep(id uint64) {
	if id == p.sleepID {
		p.wake()
	}
}

// localNow is the host clock's reading now.
func (p *process) localNow() reading { return p.w.hosts[p.host].clock.local(p.w.now) }

// --- algorithm.Env ---

func (p *process) Topology(key string) []algorithm.Server {
	p.step()
	return p.topologyView(key)
}

func (p *process) Now() time.Duration { p.step(); return time.Duration(p.localNow()) }
func (p *process) LocalNow() time.Duration {
	p.step()
	return time.Duration(int64(p.localNow()) + p.w.hosts[p.host].zone.offsetAt(p.w.now))
}
func (p *process) HostName() string      { p.step(); return p.w.hosts[p.host].name }
func (p *process) ClientName() string    { p.step(); return p.name }
func (p *process) Sleep(d time.Duration) { p.sleep(int64(d)) }
func (p *process) Rand() *rand.Rand      { p.step(); return p.algoRand }

// serverStub is algorithm.Server for one node, as seen by one client.
type serverStub struct {
	p    *process
	node int
}

func (s *serverStub) Name() string { return s.p.w.nodes[s.node].name }

func (s *serverStub) WriteIfDoesNotExistsOrSameServer(key, owner string, expiry time.Duration) error {
	return s.p.rpc(s.node, request{op: opWriteIfAbsentOrSame, key: key, owner: owner, expiry: int64(expiry)}).err.err()
}

func (s *serverStub) ReadKey(key string) (algorithm.Item, error) {
	r := s.p.rpc(s.node, request{op: opRead, key: key})
	return r.item, r.err.err()
}

func (s *serverStub) RemoveKey(key string, version uint64) error {
	return s.p.rpc(s.node, request{op: opRemove, key: key, version: version}).err.err()
}

func (s *serverStub) SetIfAbsentTTL(key, owner string, ttl time.Duration) (algorithm.Item, error) {
	r := s.p.rpc(s.node, request{op: opSetIfAbsentTTL, key: key, owner: owner, ttl: int64(ttl)})
	return r.item, r.err.err()
}

func (s *serverStub) CompareAndDelete(key, owner string) error {
	return s.p.rpc(s.node, request{op: opCompareAndDelete, key: key, owner: owner}).err.err()
}

func (s *serverStub) Increment(key string) (uint64, error) {
	r := s.p.rpc(s.node, request{op: opIncrement, key: key})
	return r.counter, r.err.err()
}

func (s *serverStub) RaiseCounter(key string, atLeast uint64) (uint64, error) {
	r := s.p.rpc(s.node, request{op: opRaiseCounter, key: key, num: atLeast})
	return r.counter, r.err.err()
}

func (s *serverStub) ExtendIfOwner(key, owner string, ttl time.Duration) error {
	return s.p.rpc(s.node, request{op: opExtendIfOwner, key: key, owner: owner, ttl: int64(ttl)}).err.err()
}

func (s *serverStub) LeaseGrant(ttl time.Duration) (uint64, error) {
	r := s.p.rpc(s.node, request{op: opLeaseGrant, ttl: int64(ttl)})
	return r.counter, r.err.err()
}

func (s *serverStub) LeaseKeepAlive(lease uint64) error {
	return s.p.rpc(s.node, request{op: opLeaseKeepAlive, num: lease}).err.err()
}

func (s *serverStub) LeaseRevoke(lease uint64) error {
	return s.p.rpc(s.node, request{op: opLeaseRevoke, num: lease}).err.err()
}

func (s *serverStub) CreateWithLease(key, owner string, lease uint64) (algorithm.Item, error) {
	r := s.p.rpc(s.node, request{op: opCreateWithLease, key: key, owner: owner, num: lease})
	return r.item, r.err.err()
}

func (s *serverStub) FirstCreated(prefix string) (algorithm.Item, error) {
	r := s.p.rpc(s.node, request{op: opFirstCreated, key: prefix})
	return r.item, r.err.err()
}

func (s *serverStub) LastCreatedBefore(prefix string, rev uint64) (algorithm.Item, error) {
	r := s.p.rpc(s.node, request{op: opLastCreatedBefore, key: prefix, num: rev})
	return r.item, r.err.err()
}

func (s *serverStub) Delete(key string) error {
	return s.p.rpc(s.node, request{op: opDelete, key: key}).err.err()
}

func (p *process) TTL() time.Duration { p.step(); return p.w.cfg.TTL }
