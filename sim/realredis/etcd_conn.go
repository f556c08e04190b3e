package realredis

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/locksim/locksim/sim/etcdnode"
)

// econn is one client's etcdnode.Conn: what etcd's client library, through
// the shim, sends and waits on. It carries one gRPC connection at a time
// (etrans); once that breaks, the next call or stream connects again.
// Everything the coordinator does to it is staged and published, as for a
// Redis connection (world.publish).
type econn struct {
	w *world
	c *client

	mu   sync.Mutex
	tr   *etrans // the current connection; nil before the first use
	gens int     // connections made
	// gRPC's reconnect backoff: connections in a row that failed before
	// the member answered anything, and the true time before which the
	// next may not be made; jitter draws its spread.
	failedDials int
	readyAt     int64
	jitter      *rand.Rand
}

// World is the run conn belongs to, the same for every client of it (an
// opaque value): etcd's shim sets per-run state once (etcdv3.NewClient).
func (e *econn) World() any { return e.w }

// gRPC's default connection backoff (grpc/backoff.DefaultConfig): 1 s
// after the first failed attempt, 1.6 times longer after each further
// one, at most 120 s, each spread by up to 20% either way.
const (
	dialBackoffBase = int64(time.Second)
	dialBackoffMax  = int64(120 * time.Second)
)

// dialBackoff is the wait after the n-th connection attempt in a row that
// failed (n >= 1), in integers: 1.6 is 8/5, and the jitter is drawn.
func dialBackoff(n int, jitter *rand.Rand) int64 {
	d := dialBackoffBase
	for i := 1; i < n && d < dialBackoffMax; i++ {
		d = d * 8 / 5
	}
	d = min(d, dialBackoffMax)
	return d - d/5 + jitter.Int64N(2*d/5+1)
}

// waitReady waits, as a call with gRPC's WaitForReady does, until the
// connection may be made again after failed attempts, or ctx ends (false).
// etcd's client sets WaitForReady on every call and stream.
func (e *econn) waitReady(ctx context.Context) bool {
	e.mu.Lock()
	wait := e.readyAt - e.w.now()
	if e.tr != nil && e.tr.broken == nil {
		wait = 0 // the connection is up: nothing to wait for
	}
	e.mu.Unlock()
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(wait))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// etrans is one gRPC connection (one TCP connection, HTTP/2 over it):
// unary calls and streams share its FIFO in each direction.
type etrans struct {
	conn *econn
	gen  int

	// Guarded by conn.mu.
	broken  error // set: the connection failed; everything on it ends with this
	calls   []*ecall
	streams []*estream

	answered bool // the member answered something on it (guarded by conn.mu)

	// The coordinator's own.
	seen       bool // in world.etrs
	dead       bool // a message was lost: silent until keep-alive notices
	lastToNode int64
	lastToCli  int64
}

type ecall struct {
	tr   *etrans
	req  any
	key  []byte // the request's bytes: it orders calls of one instant
	resp any    // guarded by conn.mu, with err
	err  error
	done chan struct{} // cap 1
}

type estream struct {
	tr   *etrans
	kind etcdnode.StreamKind
	ctx  context.Context
	id   uint64 // the coordinator's, given when the open is scheduled

	// Guarded by tr.conn.mu.
	out   []any
	err   error // after out is drained: what Recv returns
	sends int   // messages sent, for their order
	ended bool  // the client said it is done with it
	ready chan struct{}
}

// emsg is what a client posts: a call, a stream's opening, a message on
// it, or its end.
type emsg struct {
	tr     *etrans
	call   *ecall
	stream *estream
	open   bool
	close  bool
	msg    any
	seq    int // the stream's message number
	key    []byte
}

var errStreamCanceled = &etcdnode.Error{Code: etcdnode.CodeCanceled, Msg: "context canceled"}

// codeDeadlineExceeded is gRPC's DeadlineExceeded; codeUnavailable its Unavailable.
const (
	codeDeadlineExceeded uint32 = 4
	codeUnavailable      uint32 = 14
)

// ctxErr is a call's error when its context ended first, as gRPC says it.
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &etcdnode.Error{Code: codeDeadlineExceeded, Msg: "context deadline exceeded"}
	}
	return &etcdnode.Error{Code: etcdnode.CodeCanceled, Msg: "context canceled"}
}

// transport is the current connection, a new one if the last broke.
func (e *econn) transport() *etrans {
	if e.tr == nil || e.tr.broken != nil {
		e.gens++
		e.tr = &etrans{conn: e, gen: e.gens}
	}
	return e.tr
}

// errRunOver is what a call gets once the run has ended: the member no
// longer answers (gRPC fails a call fast when it cannot connect).
var errRunOver = &etcdnode.Error{Code: codeUnavailable, Msg: "connection refused"}

func (e *econn) Call(ctx context.Context, req any) (any, error) {
	if !e.waitReady(ctx) {
		return nil, ctxErr(ctx)
	}
	if e.w.over.Load() {
		return nil, errRunOver
	}
	key, err := json.Marshal(req)
	if err != nil {
		panic("realredis: an etcd request that does not encode: " + err.Error())
	}
	e.mu.Lock()
	tr := e.transport()
	call := &ecall{tr: tr, req: req, key: key, done: make(chan struct{}, 1)}
	tr.calls = append(tr.calls, call)
	e.mu.Unlock()
	e.w.post(inboxItem{kind: itemEtcd, at: time.Now(), client: e.c.idx, etcd: &emsg{tr: tr, call: call, key: key}})
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return call.resp, call.err
}

func (e *econn) Open(ctx context.Context, kind etcdnode.StreamKind) (etcdnode.Stream, error) {
	if e.w.over.Load() {
		// etcd's client opens its streams with WaitForReady: with no
		// member to reach, the open waits for its context (the client's
		// Close). Failing it at once, etcd 3.4's watcher would reopen it
		// in a loop with no pause (3.5 added a backoff), in no time.
		<-ctx.Done()
		return nil, ctxErr(ctx)
	}
	if !e.waitReady(ctx) {
		return nil, ctxErr(ctx)
	}
	e.mu.Lock()
	tr := e.transport()
	s := &estream{tr: tr, kind: kind, ctx: ctx, ready: make(chan struct{}, 1)}
	tr.streams = append(tr.streams, s)
	e.mu.Unlock()
	e.w.post(inboxItem{kind: itemEtcd, at: time.Now(), client: e.c.idx, etcd: &emsg{tr: tr, stream: s, open: true}})
	context.AfterFunc(ctx, func() { s.end() })
	if kind == etcdnode.LeaseKeepAlive {
		// etcd's lessor starts its deadline loop (a tick every second)
		// and opens this stream at the same instant; the loop that sends
		// keep-alives starts once Open returns, and ticks every 500 ms.
		// Returned at once, both would wake together every second and
		// race on the lessor's lock: whether a keep-alive goes out just
		// as a deadline lapses would be the Go scheduler's choice. The
		// open takes a little time instead, off the 500 ms grid.
		t := time.NewTimer(keepAliveOpenDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return s, nil
}

// keepAliveOpenDelay is how long opening a lease keep-alive stream takes
// (econn.Open): not a divisor of 500 ms.
const keepAliveOpenDelay = 1300 * time.Microsecond

// end tells the member the client is done with the stream (its context
// ended, or CloseSend).
func (s *estream) end() {
	e := s.tr.conn
	e.mu.Lock()
	ended := s.ended
	s.ended = true
	e.mu.Unlock()
	if ended {
		return
	}
	e.w.post(inboxItem{kind: itemEtcd, at: time.Now(), client: e.c.idx, etcd: &emsg{tr: s.tr, stream: s, close: true, seq: 1 << 30}})
}

func (s *estream) Send(msg any) error {
	e := s.tr.conn
	key, err := json.Marshal(msg)
	if err != nil {
		panic("realredis: an etcd stream message that does not encode: " + err.Error())
	}
	e.mu.Lock()
	// Not s.ctx: a stream's context ending and a message sent on it are
	// two goroutines' doing at one instant; the message goes, and the
	// close (ordered after it) follows.
	if s.tr.broken != nil {
		e.mu.Unlock()
		return io.EOF
	}
	s.sends++
	seq := s.sends
	e.mu.Unlock()
	e.w.post(inboxItem{kind: itemEtcd, at: time.Now(), client: e.c.idx, etcd: &emsg{tr: s.tr, stream: s, msg: msg, seq: seq, key: key}})
	return nil
}

func (s *estream) Recv() (any, error) {
	e := s.tr.conn
	for {
		e.mu.Lock()
		if len(s.out) > 0 {
			m := s.out[0]
			s.out = s.out[1:]
			e.mu.Unlock()
			return m, nil
		}
		err := s.err
		e.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if s.ctx.Err() != nil {
			return nil, errStreamCanceled
		}
		select {
		case <-s.ready:
		case <-s.ctx.Done():
		}
	}
}

func (s *estream) CloseSend() error {
	s.end()
	return nil
}

func (s *estream) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}
