package realredis

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/etcdnode"
	"github.com/locksim/locksim/sim/redisnode"
)

// world is one run: the coordinator's state. Only the coordinator
// goroutine touches it, except where a field says otherwise.
type world struct {
	cfg   sim.Config
	plan  faults.Plan
	lock  Lock
	seed  uint64
	epoch time.Time
	end   int64

	nodes   []*node
	clients []*client
	// etcd's: the connections the coordinator has seen, and the open
	// streams by the IDs it gave them.
	etrs       []*etrans
	estreams   map[uint64]*estream
	nextStream uint64
	leases     []leaseLife // granted to the clients, in grant order
	served     [][]int64   // per client, when the member served each of its calls
	q          queue
	seq        uint64
	net        *rand.Rand
	parts      []partition
	conns      int          // dialled so far
	requests   int64        // sent by the clients
	sent       []sentValues // by client: what each sent, for leak probes (leak.go)
	watches    []freeWatch  // Locks that gave up before their promise was up, and Lock calls under way (gaveup.go)
	lastFault  int64        // true time of the last timed fault's start or end (the starvation watch)
	grants     uint64       // grants recorded so far (under hmu): a watch's free stretch has none
	// quarantine: a restarted node stays down one TTL more (the lock's
	// envelope relies on it and the plan did not lapse it).
	quarantine bool
	// fenced: the resource checks fencing tokens with fence (the lock's
	// envelope relies on it and the plan did not lapse it).
	fenced bool
	fence  sim.Fence

	// The inbox: what client goroutines posted since the coordinator last
	// looked. Guarded by imu; wake tells the coordinator.
	imu   sync.Mutex
	inbox []inboxItem
	wake  chan struct{}
	// instant holds what was drained at this instant, until a turn brings
	// nothing new (the coordinator's own).
	instant []inboxItem
	exits   int // client goroutines that have returned (imu)

	staged []stagedEffect // published after the instant's events

	hmu    sync.Mutex // guards the clients' event lists
	hist   model.History
	events int64

	hash    hash.Hash64
	tracing bool
	trace   []model.TraceEvent
	scratch []byte

	ended       bool
	over        atomic.Bool  // ended, for the clients' goroutines (etcd)
	lingerUntil int64        // after the clients stopped: the end of the quiet spell
	noAnswer    []unanswered // dials left unanswered (a partition, a black hole)
	ctx         context.Context
	cancel      context.CancelFunc
	err         error // the run cannot go on (a tie it cannot order)
	abort       *model.Abort
}

type node struct {
	store       *redisnode.Node
	member      *etcdnode.Member // instead of store, for an etcd lock
	down        int              // open crash windows
	blackHole   int              // of them, those that do not answer
	wipe        bool
	quarantined bool // down for its quarantine after a restart
	clogUntil   int64
	offset      int64
	driftPPM    int64
	jumps       []jump
	conns       []*conn // live connections
}

type jump struct{ at, delta int64 }

// nodeEpoch is a node's clock reading when the run begins, before its
// offset: 2000-01-01 in Unix nanoseconds, the bubble's own start, so that
// TIME answers a date and no offset a plan draws makes a reading negative.
const nodeEpoch = 946_684_800 * int64(time.Second)

// reading is an instant on a node's own clock, in nanoseconds since the
// Unix epoch (from nodeEpoch): what redisnode and etcdnode are given as
// now. True time, what the coordinator's queue orders, is a plain int64
// since the run began; a reading comes from it only through local or
// memberClock, and goes to a node as int64 only at the node's call.
type reading int64

// local is the node's clock reading at true time t (the simulator's
// arithmetic: offset, drift, jumps at or before t).
func (n *node) local(t int64) reading {
	l := reading(nodeEpoch + t + n.offset + faults.DriftAt(n.driftPPM, t))
	for _, j := range n.jumps {
		if j.at <= t {
			l += reading(j.delta)
		}
	}
	return l
}

type partition struct {
	id     int
	nodes  uint64
	hosts  uint64
	oneWay bool
}

type inboxKind uint8

const (
	itemRequest inboxKind = iota
	itemDial
	itemResource
	itemEtcd
	itemProbe // a client's failed Lock asks whether it left the lock in its name
)

type inboxItem struct {
	kind inboxKind
	at   time.Time
	conn *conn
	args [][]byte
	// dials and resource accesses
	client, node int
	dial         chan dialResult
	dialGone     *atomic.Int64 // set by the dialer, to the true time it gave the dial up (the starvation watch)
	res          *resourceCall
	etcd         *emsg
	probe        *probe
	// inLock: a request its client sent during a Lock call (leak.go
	// reads the values only such requests carry)
	inLock bool
}

type dialResult struct {
	c   *conn
	err error
}

// stagedEffect is something the coordinator did to a client's side that
// the clients see only at publish.
type stagedEffect struct {
	conn  *conn
	data  []byte // reply bytes to deliver
	reply bool   // data is one reply (answered++)
	reset bool
	dial  chan dialResult
	dr    dialResult
	res   *resourceCall
	// etcd's: a connection broken (err), a call answered (resp, err), a
	// stream message (msg) or its end (eof).
	tr     *etrans
	broken bool
	call   *ecall
	resp   any
	err    error
	stream *estream
	msg    any
	eof    bool
}

func (w *world) post(it inboxItem) {
	w.imu.Lock()
	w.inbox = append(w.inbox, it)
	w.imu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// now is the bubble's clock as true time since the run began.
func (w *world) now() int64 { return int64(time.Since(w.epoch)) }

// loop is the coordinator. Each turn it waits until every other goroutine
// of the bubble is durably blocked, so nothing runs but it; then it takes
// what the clients posted, in an order of its own, and processes the
// events due now; what that does to the clients' side is published at
// once, and they run again. Timers due at an instant run before the
// deliveries at that instant (they fire as time reaches it, and the wait
// lets them settle first).
func (w *world) loop() {
	for {
		synctest.Wait()
		if w.getErr() != nil {
			w.shutdown()
		}
		if w.drain() {
			w.publish()
			continue
		}
		if len(w.instant) > 0 {
			w.schedule()
			w.publish() // connections refused after the run ended (etcd)
			continue
		}
		now := w.now()
		if w.q.Len() > 0 && w.q.peek().at <= now {
			w.processDue(now)
			w.publish()
			continue
		}
		next, stop := w.idle(now)
		if stop {
			return
		}
		if next < 0 {
			<-w.wake
			continue
		}
		t := time.NewTimer(time.Duration(next - now))
		select {
		case <-w.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// processDue processes the events due at now, in the queue's order.
func (w *world) processDue(now int64) {
	for n := 0; w.q.Len() > 0 && w.q.peek().at <= now; n++ {
		e := heap.Pop(&w.q).(*event)
		if e.kind == evEnd && (n > 0 || w.q.Len() > 0 && w.q.peek().at <= now) {
			// The run ends alone: after everything else due at its
			// instant, and after the clients settled on it, so that no
			// client sees the cancellation race a reply of the same
			// instant.
			w.push(e)
			if n > 0 {
				break
			}
			continue
		}
		w.process(e)
	}
}

// idle is what the coordinator does when nothing is due at now: the
// instant to wake at (-1: only when a client posts), or stop, once the
// ended run's clients have stopped and a quiet spell passed, or when a
// client outlives the run (a livelock finding).
func (w *world) idle(now int64) (next int64, stop bool) {
	w.imu.Lock()
	done := w.exits == len(w.clients)
	w.imu.Unlock()
	next = -1
	if w.q.Len() > 0 {
		next = w.q.peek().at
	}
	if !done && w.ended && now > w.end+int64(stopWithin) {
		// A client that outlives the run by this much ignores its
		// context: a finding of the lock (its goroutines cannot be
		// stopped; the bubble reports them, RunTest keeps the finding).
		w.hmu.Lock()
		if w.abort == nil {
			w.abort = &model.Abort{Kind: model.Livelock, Client: w.stuckClient(), Time: w.end,
				Detail: fmt.Sprintf("a client was still running %s after the run ended and its context was cancelled: its Lock or Unlock ignores the context", stopWithin)}
		}
		w.hmu.Unlock()
		return 0, true
	}
	if done && w.ended {
		// The clients have stopped and closed their connections; the
		// library's own goroutines (a dial's retries) may still be
		// winding down on timers, and the bubble cannot end before they
		// do. They get virtual time until a quiet spell passes.
		if w.lingerUntil == 0 {
			w.lingerUntil = now + int64(linger)
		}
		if now >= w.lingerUntil {
			return 0, true
		}
		if next < 0 || next > w.lingerUntil {
			next = w.lingerUntil
		}
	}
	return next, false
}

// drain takes the inbox in a deterministic order: by the instant posted,
// client, node, kind and bytes; a connection's requests stay in the order
// written. Two different items with equal keys would be ordered by
// goroutine arrival: the run fails instead (w.err).
func (w *world) drain() bool {
	w.imu.Lock()
	items := w.inbox
	w.inbox = nil
	w.imu.Unlock()
	if len(items) == 0 {
		return false
	}
	w.lingerUntil = 0
	// Dials are answered now (a client cannot send before it connects),
	// by client and node; two of one client to one node are alike.
	slices.SortStableFunc(items, func(a, b inboxItem) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.client, b.client), cmp.Compare(a.node, b.node))
	})
	for _, it := range items {
		switch it.kind {
		case itemDial:
			w.dial(it)
		case itemProbe:
			w.answerProbe(it)
		default:
			w.instant = append(w.instant, it)
		}
	}
	return true
}

// schedule puts what the clients sent during the instant on the wire, in
// an order of its own: the instant is over (a turn brought nothing new),
// so which goroutine came first, or in which turn, decides nothing.
func (w *world) schedule() {
	items := w.instant
	w.instant = nil
	// A batch is one connection's requests in the order written, or one
	// access to the counter; its key is computed once, when it is made.
	type batch struct {
		first  inboxItem
		reqs   [][][]byte
		inLock []bool // by request: sent during a Lock call
		at     int64
		client int
		node   int
		kind   inboxKind
		bytes  []byte
	}
	var batches []*batch
	byConn := map[*conn]*batch{}
	var ems []*emsg
	emAt := map[*emsg]int64{}
	for _, it := range items {
		if it.kind == itemEtcd {
			ems = append(ems, it.etcd)
			emAt[it.etcd] = int64(it.at.Sub(w.epoch))
			continue
		}
		if it.kind == itemRequest {
			if b := byConn[it.conn]; b != nil {
				b.reqs = append(b.reqs, it.args)
				b.inLock = append(b.inLock, it.inLock)
				continue
			}
			b := &batch{first: it, reqs: [][][]byte{it.args}, inLock: []bool{it.inLock}, at: int64(it.at.Sub(w.epoch)),
				client: it.conn.client, node: it.conn.node, kind: it.kind, bytes: bytes.Join(it.args, []byte{0})}
			byConn[it.conn] = b
			batches = append(batches, b)
			continue
		}
		batches = append(batches, &batch{first: it, at: int64(it.at.Sub(w.epoch)), client: it.client, node: it.node,
			kind: it.kind, bytes: []byte{byte(it.res.op)}})
	}
	order := func(a, b *batch) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.client, b.client), cmp.Compare(a.node, b.node),
			cmp.Compare(a.kind, b.kind), bytes.Compare(a.bytes, b.bytes))
	}
	// Two identical requests of one client to one node at one instant, on
	// two connections, go in the order of their connections (dial order).
	// Which of the client's goroutines holds which connection can be the
	// scheduler's choice; when that changes what the lock does, the seed
	// does not replay, and seedrun.Confirm reports it as nondeterminism.
	byConnID := func(a, b *batch) int {
		if c := order(a, b); c != 0 || a.kind != itemRequest {
			return c
		}
		return cmp.Compare(a.first.conn.id, b.first.conn.id)
	}
	slices.SortStableFunc(batches, byConnID)
	for i := 1; i < len(batches); i++ {
		if b := batches[i]; order(batches[i-1], b) == 0 && b.kind == itemRequest {
			w.note(b.at, fmt.Sprintf("tie: %s sent n%d two identical requests on two connections (%s): ordered by connection",
				w.clients[b.client].name, b.node, quote(b.reqs[0])))
		}
	}
	for _, b := range batches {
		switch b.kind {
		case itemRequest:
			for i, args := range b.reqs {
				if b.inLock[i] {
					w.noteSent(b.client, b.node, args, w.now())
					w.watchStarved(b.client, w.now())
				}
				w.sendRequest(b.first.conn, args, w.now())
			}
		case itemResource:
			w.sendResource(b.first.res)
		}
	}
	if len(ems) > 0 {
		w.scheduleEtcd(ems, emAt)
	}
}

// publish makes the instant's effects visible: every change first, under
// each connection's lock, then the wake-ups, so that a client that wakes
// sees the whole instant.
func (w *world) publish() {
	var etcd []stagedEffect
	rest := w.staged[:0]
	for _, s := range w.staged {
		if s.tr != nil {
			etcd = append(etcd, s)
		} else {
			rest = append(rest, s)
		}
	}
	w.staged = rest
	w.apply()
	w.wakeClients()
	w.publishEtcd(etcd)
}

// publishEtcd makes the instant's etcd changes one at a time, each waking
// its client and waiting until the bubble settles before the next: etcd's
// client runs several goroutines per connection (keep-alives, watches)
// that select among channels, and two of them woken at once would race
// in it (a watch cancelled, or not, before its stream closed).
func (w *world) publishEtcd(effects []stagedEffect) {
	for i, s := range effects {
		if i > 0 {
			synctest.Wait()
		}
		applyEtcd(s)
		wakeEtcd(s)
	}
}

// apply makes every staged change under its connection's lock, waking
// no one.
func (w *world) apply() {
	for _, s := range w.staged {
		if s.tr != nil {
			applyEtcd(s)
		}
		if c := s.conn; c != nil {
			c.mu.Lock()
			if s.data != nil && !c.closed {
				c.in = append(c.in, s.data...)
			}
			if s.reply {
				c.answered++
			}
			if s.reset {
				c.reset = true
			}
			c.mu.Unlock()
		}
	}
}

// wakeClients wakes whoever waits on a staged change.
func (w *world) wakeClients() {
	for _, s := range w.staged {
		switch {
		case s.tr != nil:
			wakeEtcd(s)
		case s.conn != nil:
			s.conn.signal()
		case s.dial != nil:
			s.dial <- s.dr
		case s.res != nil:
			s.res.done <- struct{}{}
		}
	}
	w.staged = w.staged[:0]
}

// shutdown ends the run: the clients' context is cancelled, every
// connection reset, every dial refused from now on.
func (w *world) shutdown() {
	if w.ended {
		return
	}
	w.ended = true
	w.over.Store(true)
	for _, u := range w.noAnswer {
		w.staged = append(w.staged, stagedEffect{dial: u.dial, dr: dialResult{err: errRefuse}})
	}
	w.noAnswer = nil
	for _, n := range w.nodes {
		for _, c := range n.conns {
			w.staged = append(w.staged, stagedEffect{conn: c, reset: true})
			c.dead = true
		}
		n.conns = nil
	}
	for _, tr := range w.etrs {
		w.breakEtcd(tr, w.now(), "the run ended", "the run ended")
	}
	// Every connection is reset before anyone learns the run ended, and
	// the context is cancelled before anyone is woken: whichever a client
	// sees first, it sees both.
	w.apply()
	w.cancel()
	w.wakeClients()
}

// record adds a history event of client c at true time t (the clients'
// goroutines and the coordinator both record; merged at the end).
func (w *world) record(c *client, e model.Event) {
	w.hmu.Lock()
	e.Client = c.idx
	c.events = append(c.events, e)
	w.hmu.Unlock()
}

// note hashes one coordinator event and, when tracing, keeps its text.
func (w *world) note(at int64, what string) {
	w.events++
	w.scratch = binary.LittleEndian.AppendUint64(w.scratch[:0], uint64(at))
	w.scratch = append(w.scratch, what...)
	w.hash.Write(w.scratch)
	if w.tracing {
		w.trace = append(w.trace, model.TraceEvent{Time: at, Seq: uint64(w.events), What: what})
	}
}

// noteApplied hashes one request applied on its node, and its reply, as
// bytes: the hot path formats no text unless the run is traced (the hash
// is the same either way, so a traced replay hashes as the sweep did).
func (w *world) noteApplied(at int64, c *conn, args [][]byte, reply []byte, r redisnode.Reply) {
	w.events++
	b := binary.LittleEndian.AppendUint64(w.scratch[:0], uint64(at))
	b = append(b, byte(c.node), byte(c.client), byte(c.client>>8))
	for _, a := range args {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(a)))
		b = append(b, a...)
	}
	b = append(b, reply...)
	w.scratch = b
	w.hash.Write(b)
	if w.tracing {
		what := fmt.Sprintf("n%d <- %s: %s => %s", c.node, c.cl().name, quote(args), r)
		w.trace = append(w.trace, model.TraceEvent{Time: at, Seq: uint64(w.events), What: what})
	}
}

func quote(args [][]byte) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 6 {
			b.WriteString("…")
			break
		}
		if len(a) > 40 {
			fmt.Fprintf(&b, "%q…", a[:40])
			continue
		}
		if bytes.ContainsAny(a, " \"\n\r\t") || len(a) == 0 {
			fmt.Fprintf(&b, "%q", a)
			continue
		}
		b.Write(a)
	}
	return b.String()
}

// stopWithin is how long the clients have, after the run ends and their
// context is cancelled, to return.
const stopWithin = 10 * time.Minute

// stuckClient is the first client whose goroutine has not returned.
func (w *world) stuckClient() int {
	for _, c := range w.clients {
		c.mu.Lock()
		gone := c.gone
		c.mu.Unlock()
		if !gone {
			return c.idx
		}
	}
	return 0
}

// linger is how long the bubble waits, after the clients stopped, for
// the library's goroutines to wind down: a quiet spell with nothing sent.
const linger = 30 * time.Second

// The event queue, by (time, sequence number).

type eventKind uint8

const (
	evRequest eventKind = iota + 1
	evReply
	evFaultStart
	evFaultEnd
	evResource
	evResourceReply
	evEnd
	evEtcdUp     // a client's message reaches the member
	evEtcdDown   // the member's reaches the client
	evEtcdDetect // gRPC's keep-alive gives a dead connection up
	evExpiry     // the member's lessor looks for expired leases
	evWatch      // a look at the nodes a Lock that gave up early asked (gaveup.go)
)

type event struct {
	at   int64
	seq  uint64
	kind eventKind
	conn *conn
	args [][]byte
	data []byte
	idx  int
	res  *resourceCall
	// paused: a request a pause inside an acquire held before its send.
	paused bool
	emsg   *emsg
	eff    *stagedEffect
	etr    *etrans
}

type queue []*event

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
func (q queue) peek() *event { return q[0] }

func (w *world) push(e *event) {
	w.seq++
	e.seq = w.seq
	heap.Push(&w.q, e)
}
