package sim

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// world is one scenario being run: everything the event loop touches.
type world struct {
	cfg     Config
	variant algorithm.Variant
	plan    faults.Plan
	now     int64
	end     int64
	q       queue

	nodes   []node
	hosts   []host
	clients []*process
	// Topology (topology.go): every membership so far, by generation, and
	// the true one now; restores are the memberships temporary changes
	// replaced.
	isRing bool
	ring   ring
	views  [][]int
	gen    int
	// keyNodesOf is the lock key's nodes at generation keyNodesGen-1
	// (keyNodes; 0: not placed yet).
	keyNodesOf  []int
	keyNodesGen int
	restores    []topologyRestore
	topoRand    stream // when each client learns of a change that spreads
	// pendingMoves are plan events (topology, while-held) waiting for a grant.
	pendingMoves []int

	msgs     []message
	freeMsgs []int32
	netRand  stream
	spans    netSpans       // latency's ranges, worked out once
	choose   Chooser        // nil: the seed's streams decide every choice point
	inject   Injector       // choose, if it injects faults at protocol steps
	injected []faults.Event // the faults it injected, in order
	pointRnd stream
	parts    []partition

	resource resource
	// What the deployment provides the variant (its envelope asks; a plan's
	// deployment lapses take it away).
	quarantine bool // restarted nodes refuse lock writes for one TTL
	fenced     bool // the resource checks fencing tokens
	hist       model.History
	histSeq    uint64

	hash    uint64
	events  int64
	tracing bool
	items   bool // Scenario.Items
	trace   []model.TraceEvent
	abort   *model.Abort
	ended   bool

	// woken is the process the current event wakes (an event wakes at most
	// one, as its last act); handoff is the process a blocked process's
	// coroutine asks loop to resume (nil: the run is over). See loop.
	woken    *process
	handoff  *process
	inEvents bool
	// onCPU is the process whose coroutine runs now (nil: loop runs).
	// An Env call made while another runs, or while this one runs but not
	// from its coroutine (process.step), came from a goroutine of the
	// algorithm's own; that goroutine records misuse (see process.misused),
	// and the run ends with a Misuse finding.
	onCPU  *process
	misuse atomic.Pointer[model.Abort]
	// others is the fewest goroutines besides carriers the process had
	// since the clients were made (othersNow): more now, and the
	// algorithm may have started one (see startedGoroutines). A count is
	// cheap (a monotonic count of goroutines made costs 30 times more, on
	// every call); its blind spot is a goroutine elsewhere in the process
	// that ends just as the lock starts one: that one's Env calls are then
	// taken for its client's. In a worker process nothing else starts or
	// ends goroutines while a seed runs.
	others atomic.Int64
	// carriers are the Buffers' idle carriers, for the clients to take.
	carriers []*carrier

	eventCap int64 // cfg.EventCap for the run's clients
	// maxCalls is cfg.maxCallsNoSleep, read once: a client's every call
	// compares with it, and the method's Config receiver is a copy.
	maxCalls  int64
	atInstant int64 // events since virtual time last passed
}

type host struct {
	name  string
	clock clock
	zone  zone // local time: what LocalNow adds to the clock
}

// zone is a host's local time zone: offset from UTC, and shift more from
// true time shiftAt on (a daylight-saving change; zero shift: none).
type zone struct {
	offset, shiftAt, shift int64
}

// offsetAt is the zone's offset from UTC at true time t.
func (z zone) offsetAt(t int64) int64 {
	if z.shift != 0 && t >= z.shiftAt {
		return z.offset + z.shift
	}
	return z.offset
}

// Run executes one scenario and returns its history and trace hash. Bad
// configuration or plans return an error naming the field; a misbehaving
// algorithm (panic, endless loop) never does: it ends the run with a
// History.Abort the checkers turn into a finding.
func Run(s Scenario) (Result, error) {
	w, err := newWorld(s)
	if err != nil {
		return Result{}, err
	}
	w.loop()
	w.finish()
	w.returnBuffers(s.Buffers)
	return Result{History: w.hist, TraceHash: finalHash(w.hash), Events: w.events, Trace: w.trace, Injected: w.injected}, nil
}

func newWorld(s Scenario) (*world, error) {
	cfg := s.Config.Under(s.Plan)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if s.Variant.New == nil {
		return nil, fmt.Errorf("sim: variant %q has no constructor", s.Variant.Name)
	}
	if err := validatePlan(s.Plan, cfg); err != nil {
		return nil, err
	}
	w := &world{
		cfg: cfg, variant: s.Variant, plan: s.Plan, end: int64(cfg.Duration),
		netRand: newStream(s.Seed, streamNetwork), pointRnd: newStream(s.Seed, streamPoints),
		topoRand: newStream(s.Seed, streamTopology), isRing: cfg.Placement == PlacementRing,
		quarantine: s.Variant.Envelope.Quarantined() && !s.Plan.Deployment.NoQuarantine,
		fenced:     s.Variant.Envelope.Fenced() && !s.Plan.Deployment.NoFencing,
		hash:       fnvOffset, tracing: s.Trace, items: s.Items,
	}
	if s.Choices != nil {
		w.choose = s.Choices(randomChoices{w})
		w.inject, _ = w.choose.(Injector)
	}
	w.mix(s.Seed, uint64(cfg.Nodes), uint64(cfg.Hosts), uint64(cfg.ThreadsPerHost))
	w.nodes = make([]node, cfg.Nodes)
	for i := range w.nodes {
		w.nodes[i] = node{name: indexName("n", i), store: newStore(cfg.RestartingVersions), up: true}
		w.nodes[i].store.gone = func(e *keyEntry, how goneHow) { w.itemGone(i, e, how) }
	}
	w.hosts = make([]host, cfg.Hosts)
	for i := range w.hosts {
		w.hosts[i] = host{name: indexName("h", i)}
	}
	if w.isRing {
		w.ring = newRing(cfg.Nodes, cfg.RingSalt)
	}
	w.views = [][]int{w.initialMembers()}
	w.applyClocks()
	w.hist = model.History{End: w.end, TTL: cfg.TTL, Think: cfg.ThinkMax, Fenced: w.fenced, Healed: w.healedAt(),
		Replicas: len(w.placement(w.views[0], LockKey))}
	w.writeAppData()
	w.takeBuffers(s.Buffers)
	for h := 0; h < cfg.Hosts; h++ {
		for t := 0; t < cfg.ThreadsPerHost; t++ {
			p := newProcess(w, len(w.clients), h, indexName("h", h)+indexName("/t", t), s.Seed)
			w.clients = append(w.clients, p)
			w.hist.Clients = append(w.hist.Clients, model.Client{Name: p.name, Host: w.hosts[h].name})
		}
	}
	w.spans = w.netSpans()
	w.eventCap = cfg.EventCap(len(w.clients))
	w.maxCalls = cfg.maxCallsNoSleep()
	w.others.Store(othersNow())
	for i := range w.clients {
		start := w.between(Choice{Kind: ChoiceStart, Client: i, Node: -1}, 0, int64(cfg.ThinkMax))
		w.q.push(start, evStart, int32(i), 0)
	}
	for i, e := range w.plan.Events {
		w.q.push(int64(e.At), evFault, int32(i), 0)
	}
	w.q.push(w.end, evEnd, 0, 0)
	return w, nil
}

// loop runs the scenario until the time is up, the event cap is hit, or a
// client misbehaves. Events run on this goroutine until one wakes a process;
// from then on they run on the coroutine of whichever process is blocked
// (see process.block), which hands over here only to have another process
// resumed: a coroutine can only switch back to the goroutine that resumed it.
func (w *world) loop() {
	p := w.runEvents()
	for p != nil {
		w.handoff = nil
		p.run()
		if p = w.handoff; p == nil {
			p = w.runEvents() // p ended, or the run is over
		}
	}
}

// runEvents steps events until one wakes a process, and returns that
// process; nil once the run is over. It runs on whichever goroutine called
// it; inEvents tells a process's panic handler that a panic came from here
// (a simulator bug), not from client code.
func (w *world) runEvents() *process {
	w.inEvents = true
	// The queue cannot run empty first: the evEnd event newWorld queued stays
	// queued until it ends the run.
	for !w.ended && w.abort == nil && w.misuse.Load() == nil {
		e := w.q.pop()
		if e.at != w.now {
			w.now, w.atInstant = e.at, 0
		}
		w.events++
		w.atInstant++
		if w.events > w.eventCap || w.atInstant > MaxEventsAtInstant {
			w.abort = w.capReached()
			break
		}
		w.mix(uint64(e.at), uint64(e.kind), uint64(e.a), e.b)
		// The handlers read e only as their arguments: their pushes may
		// reuse its slot (see queue.pop). The switch is here, not in a
		// function of its own, to save a call per event.
		switch e.kind {
		case evStart:
			w.clients[e.a].wake()
		case evDeliver:
			w.deliver(e.a)
		case evTimeout:
			w.clients[e.a].timerFired()
		case evWake:
			w.clients[e.a].wakeFromSleep(e.b)
		case evResume:
			w.clients[e.a].unpause()
		case evValidity:
			w.clients[e.a].validityPassed(e.b)
		case evView:
			w.clients[e.a].learnView(e.b)
		case evFault:
			w.startFault(int(e.a))
		case evFaultEnd:
			w.endFault(int(e.a))
		case evEnd:
			w.ended = true
		}
		if p := w.woken; p != nil {
			w.woken = nil
			w.inEvents = false
			return p
		}
	}
	w.inEvents = false
	return nil
}

// capReached is the livelock finding of a run past an event cap, saying
// what was stuck.
func (w *world) capReached() *model.Abort {
	a := &model.Abort{Kind: model.Livelock, Client: -1, Time: w.now}
	if w.atInstant > MaxEventsAtInstant {
		a.Detail = fmt.Sprintf("%d events at %s without virtual time passing: something keeps the simulation busy (calls or sleeps that take no time?)", w.atInstant-1, fmtTime(w.now))
	} else {
		a.Detail = fmt.Sprintf("event cap of %d events reached at %s (%d per client per virtual second of the run, or max_events): virtual time was passing, but the clients made events at over %d times the default world's rate",
			w.eventCap, fmtTime(w.now), EventsPerClientSecond, EventsPerClientSecond/6)
	}
	return a
}

// finish stops every client and records what the checkers need from the end state.
func (w *world) finish() {
	// Goroutines the algorithm started get a last chance to run, and a
	// misuse of the Env by one of them is seen while the run can still
	// report it. This decides nothing about the run: its events are over.
	if w.startedGoroutines() {
		letRun(w)
	}
	w.endOnMisuse()
	if w.abort != nil {
		w.hist.Abort = w.abort
		w.hist.End = w.now
	}
	for _, p := range w.clients {
		if p.openOp != 0 {
			w.record(p, model.Event{Kind: model.ClientStop, Reason: "run ended during " + p.openOp.String()})
		}
		p.kill()
		if p.c.lost() {
			// Its coroutine and the goroutine that took its turn wait
			// forever: the carrier is never resumed, stopped or kept.
			p.c = newCarrier()
		}
	}
	w.hist.FinalValue = w.resource.value
	w.hist.Leftovers = w.leftovers()
	w.longItemsAtEnd()
	w.computeReach()
}

// startedGoroutines reports whether the process has more goroutines
// besides carriers than it had at the fewest since the clients were made:
// the algorithm may have started one (or another run of the process did,
// which costs a yield, never a wrong verdict). A goroutine of an earlier
// run that exits meanwhile lowers the baseline, so it cannot hide one.
func (w *world) startedGoroutines() bool {
	n := othersNow()
	if base := w.others.Load(); n > base {
		return true
	} else if n < base {
		w.others.Store(n)
	}
	return false
}

// letRun gives the goroutines the algorithm started the processor, so
// that one about to misuse the Env does it now, at this point of the run,
// not whenever the Go scheduler gets to it (on one P, as in a worker,
// nothing else would run it before the run goes on or ends). More than
// one yield: the scheduler may run the caller again first, for fairness.
// On more Ps, a goroutine of the algorithm running on another may still
// call later. Only when startedGoroutines: a yield wakes another thread,
// which costs a sixth of a short run's CPU.
func letRun(w *world) {
	for i := 0; i < 3 && w.misuse.Load() == nil; i++ {
		runtime.Gosched()
	}
}

// endOnMisuse ends the run with the misuse a goroutine of the algorithm
// recorded, if one did and nothing ended the run first.
func (w *world) endOnMisuse() {
	if a := w.misuse.Load(); a != nil && w.abort == nil {
		w.abort = a
		a.Time = w.now
	}
}

// writeAppData stores the application's data before the run, as host h0
// wrote it, on the nodes the DHT places each of its keys on
// (Config.AppData): under the locked key, and maybe under <key>_lock.
func (w *world) writeAppData() {
	keys := []string(nil)
	switch w.cfg.AppData {
	case AppDataKey:
		keys = []string{LockKey}
	case AppDataLockName:
		keys = []string{LockKey, LockKey + "_lock"}
	}
	for _, k := range keys {
		for _, ni := range w.placement(w.views[0], k) {
			s := w.nodes[ni].store
			e := s.put(-1, k, entry{owner: w.hosts[0].name, version: s.nextVersion(k), writer: -1})
			e.app = true
		}
		w.hist.AppData = append(w.hist.AppData, k)
	}
}

func (w *world) leftovers() []model.LockItem {
	var out []model.LockItem
	for i := range w.nodes {
		n := &w.nodes[i]
		keys := make([]string, 0, len(n.store.entries))
		for _, ke := range n.store.entries {
			keys = append(keys, ke.key)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if e, ok := n.store.live(k, n.clock.local(w.now)); ok && e.owner != "" && !e.app { // the application's data is no lock item
				out = append(out, model.LockItem{Node: n.name, Owner: e.owner})
			}
		}
	}
	return out
}

// record appends a history event for client p at the current true time.
func (w *world) record(p *process, e model.Event) {
	w.histSeq++
	e.Seq = w.histSeq
	e.Time = w.now
	e.Client = p.idx
	w.hist.Events = append(w.hist.Events, e)
	w.mix(uint64(e.Kind), uint64(e.Value), e.Token, boolBit(e.Granted)|boolBit(e.Accepted)<<1)
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// indexName is prefix and i, "n3": without fmt, which a short run's set-up
// would otherwise spend a few percent in.
func indexName(prefix string, i int) string { return prefix + strconv.Itoa(i) }

func fmtTime(ns int64) string {
	if ns < 0 {
		return "-" + fmtTime(-ns) // an expiry in a local time behind UTC
	}
	return fmt.Sprintf("%d.%03ds", ns/1e9, ns%1e9/1e6)
}
