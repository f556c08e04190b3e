package realredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// client is one simulated client thread: a goroutine running the workload
// through the user's Locker.
type client struct {
	w      *world
	idx    int
	host   int
	name   string
	rnd    *rand.Rand // the workload's draws: think, hold, fault points
	use    *rand.Rand // the misuse's draws (faults.Use), only when the plan has one
	events []model.Event

	mu sync.Mutex
	op model.Kind // the operation under way (AcquireCall, ReleaseCall, 0), for in-acquire pauses
	// The Lock call under way (op AcquireCall): when it was called and its
	// caller's deadline (0: none), both true time, for the starvation watch.
	lockFrom, lockDeadline int64
	cur                    *hold // the grant held, until its belief ended
	gone                   bool  // its goroutine returned

	// The coordinator's.
	pendingPause []pendingPause
	pauses       [][2]int64 // timed pauses, [from, to), from the plan
	held         [][2]int64 // etcd: point pauses that held all its messages
	conns        []*conn    // its connections not yet seen closed, for the starvation watch
	watched      int64      // lockFrom+1 of the last Lock call watched for starvation
	trouble      int64      // true time its network last failed it (a reset, a refused or unanswered dial, a lost message's connection closed)
}

// pausedUntil is when the timed pause covering true time t ends (t when
// none does): the client's messages wait for it.
func (c *client) pausedUntil(t int64) int64 { return pastWindows(c.pauses, t) }

// pastWindows is t moved past every [from, to) window that covers it, in
// the windows' order.
func pastWindows(windows [][2]int64, t int64) int64 {
	for _, p := range windows {
		if p[0] <= t && t < p[1] {
			t = p[1]
		}
	}
	return t
}

func (c *client) setOp(k model.Kind) {
	c.mu.Lock()
	c.op = k
	c.mu.Unlock()
}

// resourceCall is one access to the protected counter, through the
// coordinator (a reliable register over the network).
type resourceCall struct {
	client *client
	op     model.Kind // ResourceRead or ResourceWrite
	token  uint64     // the hold's fencing token (a fenced world)
	value  int64
	sent   int64
	got    int64
	ok     bool
	done   chan struct{}
}

func (w *world) sendResource(r *resourceCall) {
	at := max(r.sent, r.client.pausedUntil(r.sent))
	w.hist.Messages++
	w.push(&event{at: at + w.latency(r.client, -1), kind: evResource, res: r})
}

func (w *world) resourceAccess(r *resourceCall, now int64) {
	if w.ended {
		w.staged = append(w.staged, stagedEffect{res: r})
		return
	}
	ev := model.Event{Kind: r.op, Sent: r.sent, Time: now, Token: r.token, HasToken: w.fenced}
	ev.Accepted = !w.fenced || w.fence.Admit(r.token)
	switch {
	case !ev.Accepted:
	case r.op == model.ResourceWrite:
		w.hist.FinalValue = r.value
		ev.Value = r.value
	default:
		ev.Value = w.hist.FinalValue
	}
	r.got, r.ok = ev.Value, ev.Accepted
	w.record(r.client, ev)
	if w.fenced {
		w.note(now, fmt.Sprintf("resource %s by %s token=%d value=%d accepted=%v", r.op, r.client.name, r.token, ev.Value, ev.Accepted))
	} else {
		w.note(now, fmt.Sprintf("resource %s by %s value=%d", r.op, r.client.name, ev.Value))
	}
	w.hist.Messages++
	at := now + w.latency(r.client, -1)
	w.push(&event{at: max(at, r.client.pausedUntil(at)), kind: evResourceReply, res: r})
}

// resume waits out the timed pause the client is in, if any: a paused
// process takes its next step when the pause ends.
func (c *client) resume(ctx context.Context) {
	now := c.w.now()
	if until := c.pausedUntil(now); until > now {
		c.sleep(ctx, time.Duration(until-now))
	}
}

// access reads or writes the counter with hold h's token; false when the
// run ended first or the resource refused the token.
func (c *client) access(ctx context.Context, h *hold, op model.Kind, value int64) (int64, bool) {
	c.resume(ctx)
	if ctx.Err() != nil {
		return 0, false
	}
	r := &resourceCall{client: c, op: op, token: h.token, value: value, sent: c.w.now(), done: make(chan struct{}, 1)}
	c.w.post(inboxItem{kind: itemResource, at: time.Now(), client: c.idx, res: r})
	<-r.done
	return r.got, r.ok
}

// stopped records that the run ended during the client's call: at the
// end, however long the library took to give the call up after its
// context was cancelled (etcd's Mutex deletes its key on the way out).
func (c *client) stopped(why string) {
	c.rec(model.Event{Kind: model.ClientStop, Reason: why, Time: min(c.w.now(), c.w.end)})
}

// rec records an event of this client now, unless the run has ended.
func (c *client) rec(e model.Event) {
	if e.Time == 0 {
		e.Time = c.w.now()
	}
	if e.Time > c.w.end {
		return
	}
	c.w.record(c, e)
}

func (c *client) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(c.rnd.Int64N(int64(hi-lo)+1))
}

// sleep waits d of virtual time, or until the run ends.
func (c *client) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// hold is one grant, as the workload sees it.
type hold struct {
	granted    int64  // true time of the grant
	validUntil int64  // true time; 0: until released
	grantEvent int    // index of the grant in c.events
	token      uint64 // its fencing token (a fenced world)
	ended      bool
}

// expired ends the belief at the validity's end if it has passed.
func (c *client) expired(h *hold) bool {
	if h.ended {
		return true
	}
	if h.validUntil != 0 && c.w.now() >= h.validUntil {
		h.ended = true
		// Granted with no validity left, the belief ends at the grant.
		c.rec(model.Event{Kind: model.BeliefEnd, Reason: "expired", Time: max(h.validUntil, h.granted)})
	}
	return h.ended
}

// run is the client's goroutine: build the lock, then acquire, use the
// counter, release, think, until the run ends (or Config.Acquisitions).
func (c *client) run(ctx context.Context) {
	w := c.w
	defer func() {
		c.mu.Lock()
		c.gone = true
		c.mu.Unlock()
		w.imu.Lock()
		w.exits++
		w.imu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			w.fail(c, model.Panic, fmt.Sprintf("panic: %v\n%s", r, debug.Stack()))
		}
	}()
	l, closeAll := w.newLocker(c)
	defer closeAll()
	if l == nil {
		w.fail(c, model.Panic, "the lock's constructor returned a nil Locker")
		return
	}
	if cl, ok := l.(io.Closer); ok {
		defer cl.Close()
	}
	ext, _ := l.(Extender)
	fencer, _ := l.(Fencer)
	if w.fenced && fencer == nil {
		w.setErr(fmt.Errorf("%s's envelope has the resource check fencing tokens, but its Locker (%T) has no FencingToken method (realredis.Fencer)", w.lock.Name, l))
		return
	}
	for grants := 0; ctx.Err() == nil; {
		c.resume(ctx)
		c.setOp(model.AcquireCall)
		called := w.now()
		lctx, cancel, short := c.deadline(ctx)
		c.rec(model.Event{Kind: model.AcquireCall, Reason: short})
		var deadline int64 // true time; 0: none
		if dl, ok := lctx.Deadline(); ok {
			deadline = int64(dl.Sub(w.epoch))
		}
		c.mu.Lock()
		c.lockFrom, c.lockDeadline = called, deadline
		c.mu.Unlock()
		until, err := l.Lock(lctx)
		gaveUp := lctx.Err() != nil // the caller's deadline passed: the outcome is unknown to it
		cancel()
		c.setOp(0)
		if ctx.Err() != nil {
			c.stopped("run ended during acquire-call")
			return
		}
		if err == nil {
			h := c.grant(until, fencer, "")
			h = c.critical(ctx, l, ext, fencer, h)
			c.release(ctx, l, ext, h)
			if grants++; grants == w.cfg.Acquisitions {
				return
			}
		} else {
			c.rec(model.Event{Kind: model.AcquireReturn, Reason: errText(err)})
			if !gaveUp && !unknownOutcome(err) {
				c.probeLeak(called, deadline, errText(err))
			}
		}
		c.sleep(ctx, c.between(w.cfg.ThinkMin, w.cfg.ThinkMax))
	}
}

// grant records the grant Lock just returned, valid until until (zero:
// until released), with its fencing token in a fenced world, and makes it
// the client's current hold.
func (c *client) grant(until time.Time, fencer Fencer, reason string) *hold {
	w := c.w
	h := &hold{grantEvent: -1, granted: w.now()}
	ev := model.Event{Kind: model.AcquireReturn, Granted: true, Reason: reason}
	if w.fenced {
		h.token = fencer.FencingToken()
		ev.Token, ev.HasToken = h.token, true
	}
	if !until.IsZero() {
		h.validUntil = int64(until.Sub(w.epoch))
		ev.ValidUntilTrue = h.validUntil
	}
	ev.Time = h.granted
	c.rec(ev)
	w.hmu.Lock()
	w.grants++
	w.hmu.Unlock()
	h.grantEvent = len(c.events) - 1
	c.mu.Lock()
	c.cur = h
	c.mu.Unlock()
	return h
}

// newLocker builds client c's Locker over its clients of the nodes, and
// what closes those when the client stops.
func (w *world) newLocker(c *client) (Locker, func()) {
	rnd := rand.New(rand.NewPCG(w.seed, 0xc0ffee^uint64(c.idx)))
	if w.lock.NewEtcd != nil {
		ec := &EtcdClient{Name: c.name, Index: c.idx, Conn: &econn{w: w, c: c, jitter: rand.New(rand.NewPCG(w.seed, 0x6469616c<<8|uint64(c.idx)))}, TTL: w.cfg.TTL, Rand: rnd}
		return w.lock.NewEtcd(ec), func() {
			for i := len(ec.closers) - 1; i >= 0; i-- {
				ec.closers[i].Close()
			}
		}
	}
	nodes := make([]redis.UniversalClient, len(w.nodes))
	pools := make([]*redigo.Pool, len(w.nodes))
	for i := range nodes {
		nodes[i] = redis.NewClient(w.options(c, i))
		pools[i] = w.redigoPool(c, i)
	}
	closeAll := func() {
		for i := range nodes {
			nodes[i].Close()
			pools[i].Close()
		}
	}
	return w.lock.New(&Client{Name: c.name, Index: c.idx, Nodes: nodes, Redigo: pools, TTL: w.cfg.TTL, Rand: rnd}), closeAll
}

// finish ends the belief of a hold the workload never looked at again (it
// was paused, or blocked, past its validity until the run ended): the
// belief ends when the validity does, whether or not the holder notices.
func (c *client) finish() {
	c.mu.Lock()
	h := c.cur
	c.mu.Unlock()
	if h != nil && !h.ended && h.validUntil != 0 && h.validUntil <= c.w.end {
		h.ended = true
		c.events = append(c.events, model.Event{Kind: model.BeliefEnd, Reason: "expired", Client: c.idx, Time: max(h.validUntil, h.granted)})
	}
}

// critical reads the counter, holds, and writes it back plus one, stopping
// once the validity has passed. A lock that extends holds a quarter of its
// grants past the TTL, extending when a third of the TTL is left. A holder
// that misuses the lock (faults.Use) may stall past its validity instead,
// and carry on with what the library then tells it: the hold it returns
// is the one to release.
func (c *client) critical(ctx context.Context, l Locker, ext Extender, fencer Fencer, h *hold) *hold {
	w := c.w
	c.point(ctx, faults.AfterGrant, h)
	if c.expired(h) || ctx.Err() != nil {
		return h
	}
	v, ok := c.access(ctx, h, model.ResourceRead, 0)
	if !ok {
		return h
	}
	if h.validUntil != 0 && c.chance(w.plan.Use.LatePPM) {
		return c.late(ctx, ext, fencer, h)
	}
	d := c.between(w.cfg.HoldMin, w.cfg.HoldMax)
	if ext != nil && c.rnd.IntN(4) == 0 {
		d = c.between(w.cfg.TTL, 5*w.cfg.TTL/2)
	}
	end := w.now() + int64(d)
	for ctx.Err() == nil {
		left := end - w.now()
		if left <= 0 {
			break
		}
		if ext != nil && h.validUntil != 0 {
			margin := int64(w.cfg.TTL / 3)
			if h.validUntil-w.now() <= margin {
				if c.expired(h) {
					return h
				}
				c.resume(ctx)
				if c.expired(h) || ctx.Err() != nil {
					return h
				}
				start := w.now()
				until, err := ext.Extend(ctx)
				if ctx.Err() != nil {
					return h
				}
				if c.expired(h) {
					// The answer came after the validity ended. A careless
					// application (a plan with misuse) trusts it as it is.
					if w.plan.Use == (faults.Use{}) || err != nil || !c.claims(until) {
						return h
					}
					c.rec(model.Event{Kind: model.AcquireCall, Reason: "extend", Time: start})
					h = c.grant(until, fencer, "extend")
					if v, ok = c.access(ctx, h, model.ResourceRead, 0); !ok {
						return h
					}
					continue
				}
				x := model.Extend{Client: c.idx, Called: start, Time: w.now(), OK: err == nil, From: h.validUntil}
				if err != nil {
					// It cannot keep the lock: it stops using it.
					x.Reason = errText(err)
					c.noteExtend(x)
					h.ended = true
					c.rec(model.Event{Kind: model.BeliefEnd, Reason: "extend failed: " + errText(err)})
					return h
				}
				if !until.IsZero() {
					h.validUntil = int64(until.Sub(w.epoch))
					x.To = h.validUntil
					w.hmu.Lock()
					c.events[h.grantEvent].ValidUntilTrue = h.validUntil
					w.hmu.Unlock()
				}
				c.noteExtend(x)
				continue
			}
			left = min(left, h.validUntil-margin-w.now())
		}
		c.sleep(ctx, time.Duration(left))
	}
	if c.expired(h) || ctx.Err() != nil {
		return h
	}
	c.point(ctx, faults.BetweenReadWrite, h)
	if c.expired(h) || ctx.Err() != nil {
		return h
	}
	c.access(ctx, h, model.ResourceWrite, v+1)
	return h
}

// late is a holder that stalls past its validity (faults.Use.LatePPM): a
// pause of its own making, to up to LateBy after the validity ended, after
// which it carries on as careless code does. Half the time, with a lock
// that extends, it calls Extend without looking at its own validity and
// trusts the answer: a success (recorded as a grant, "extend") is a hold
// it goes on using, reading the counter afresh and writing it within the
// validity Extend reported; a failure leaves it to unlock. Otherwise it
// unlocks the lock it no longer holds. The hold returned is the one to
// release.
func (c *client) late(ctx context.Context, ext Extender, fencer Fencer, h *hold) *hold {
	w := c.w
	u := w.plan.Use
	stall := h.validUntil - w.now() + int64(time.Millisecond) + c.use.Int64N(int64(u.LateBy)+1)
	w.hmu.Lock()
	w.hist.Pauses = append(w.hist.Pauses, model.PointPause{Client: c.idx, Time: w.now(), For: stall, Point: "late (misuse)"})
	w.hmu.Unlock()
	c.sleep(ctx, time.Duration(stall))
	if ctx.Err() != nil {
		return h
	}
	c.expired(h)
	if ext == nil || c.use.IntN(2) == 0 {
		return h // it unlocks, late
	}
	c.resume(ctx)
	c.rec(model.Event{Kind: model.AcquireCall, Reason: "extend"})
	until, err := ext.Extend(ctx)
	if ctx.Err() != nil {
		c.stopped("run ended during a late extend")
		return h
	}
	if err != nil || !c.claims(until) {
		why := "no validity left"
		if err != nil {
			why = errText(err)
		}
		c.rec(model.Event{Kind: model.AcquireReturn, Reason: "extend failed: " + why})
		return h
	}
	h = c.grant(until, fencer, "extend")
	if c.expired(h) {
		return h
	}
	v, ok := c.access(ctx, h, model.ResourceRead, 0)
	if !ok || c.expired(h) || ctx.Err() != nil {
		return h
	}
	c.access(ctx, h, model.ResourceWrite, v+1)
	return h
}

// noteExtend records an Extend call and its answer, for reports.
func (c *client) noteExtend(x model.Extend) {
	if x.Time > c.w.end {
		return
	}
	c.w.hmu.Lock()
	c.w.hist.Extends = append(c.w.hist.Extends, x)
	c.w.hmu.Unlock()
}

// claims reports whether a validity a library returned claims a hold
// now: zero (until released), or an instant still ahead.
func (c *client) claims(until time.Time) bool {
	return until.IsZero() || until.After(c.w.epoch.Add(time.Duration(c.w.now())))
}

// chance draws from the misuse's stream: true with ppm in a million. A
// plan without the misuse draws nothing, so its runs are what they were.
func (c *client) chance(ppm faults.PPM) bool {
	return ppm > 0 && c.use.Uint32N(1_000_000) < uint32(ppm)
}

// deadline is the context Lock is called with: ctx, or, with the plan's
// chance of a short deadline (faults.Use.ShortDeadlinePPM), ctx with a
// deadline at most Deadline away, as a request handler's budget is.
// The third result says so, "deadline 131ms", for the history ("" for
// none).
func (c *client) deadline(ctx context.Context) (context.Context, context.CancelFunc, string) {
	u := c.w.plan.Use
	if !c.chance(u.ShortDeadlinePPM) {
		return ctx, func() {}, ""
	}
	d := time.Millisecond + time.Duration(c.use.Int64N(int64(u.Deadline)))
	lctx, cancel := context.WithTimeout(ctx, d)
	return lctx, cancel, "deadline " + d.Round(time.Millisecond).String()
}

func (c *client) release(ctx context.Context, l Locker, ext Extender, h *hold) {
	c.point(ctx, faults.BeforeRelease, h)
	if ctx.Err() != nil {
		return
	}
	if !c.expired(h) {
		h.ended = true
		c.rec(model.Event{Kind: model.BeliefEnd, Reason: "release"})
	}
	c.resume(ctx)
	if ctx.Err() != nil {
		return
	}
	c.setOp(model.ReleaseCall)
	c.mu.Lock()
	from := c.lockFrom // the Lock call that got the hold
	c.mu.Unlock()
	c.rec(model.Event{Kind: model.ReleaseCall})
	var refreshed chan refreshResult
	if ext != nil && c.chance(c.w.plan.Use.RefreshPPM) {
		refreshed = c.refresh(ctx, ext, h)
	}
	err := l.Unlock(ctx)
	var again, said string
	if refreshed != nil {
		r := <-refreshed
		c.noteExtend(r.x)
		said = r.said
		if err == nil && !r.definiteNo && ctx.Err() == nil {
			// It may hold again: a careful application unlocks once more.
			err = l.Unlock(ctx)
			again = "unlocked again after the refresher's " + r.said
		}
	}
	c.setOp(0)
	if ctx.Err() != nil {
		c.stopped("run ended during release-call")
		return
	}
	reason := errText(err)
	if again != "" {
		reason = strings.TrimSuffix(again+"; "+reason, "; ")
	}
	c.rec(model.Event{Kind: model.ReleaseReturn, Reason: reason})
	if refreshed != nil && err == nil {
		// Released, and the refresher is done: does the key its Lock wrote
		// still hold the lock in its name?
		c.probe(&probe{unlock: true, from: from, reason: "the refresher answered " + said})
	}
}

// refreshResult is what a refresher run at a release answered.
type refreshResult struct {
	x          model.Extend
	said       string // "extend → ..." in a few words
	definiteNo bool   // a failure the library heard from the nodes
}

// refresh starts a refresher not stopped first: Extend, in a goroutine of
// the client's, while the caller unlocks. Which starts first, and how long
// after it the other does (1 µs to 5 ms), is drawn, so that the two are in
// flight together in an order virtual time decides, never the scheduler:
// the one that starts first takes its connection first.
func (c *client) refresh(ctx context.Context, ext Extender, h *hold) chan refreshResult {
	first := c.use.IntN(2) == 0 // the refresher starts first
	d := time.Microsecond + time.Duration(c.use.Int64N(int64(5*time.Millisecond)))
	out := make(chan refreshResult, 1)
	go func() {
		if !first {
			c.sleep(ctx, d)
		}
		called := c.w.now()
		until, err := ext.Extend(ctx)
		x := model.Extend{Client: c.idx, Called: called, Time: c.w.now(), OK: err == nil, From: h.validUntil, Reason: "a refresher, as its holder unlocked"}
		r := refreshResult{definiteNo: err != nil && !unknownOutcome(err) && ctx.Err() == nil}
		switch {
		case err != nil:
			x.Reason += ": " + errText(err)
			r.said = "failure: " + errText(err)
		case !until.IsZero():
			x.To = int64(until.Sub(c.w.epoch))
			r.said = "success"
		default:
			r.said = "success"
		}
		r.x = x
		out <- r
	}()
	if first {
		c.sleep(ctx, d)
	}
	return out
}

// point pauses at a fault point with the plan's probability: PauseFor, or
// until UntilValidityLeft of the validity is left.
func (c *client) point(ctx context.Context, p faults.Point, h *hold) {
	pts := c.w.plan.Points
	if pts.PausePPM == 0 || c.rnd.Uint32N(1_000_000) >= uint32(pts.PausePPM) {
		return
	}
	d := int64(pts.PauseFor)
	if pts.UntilValidityLeft != 0 && h.validUntil != 0 {
		d = h.validUntil - c.w.now() - int64(pts.UntilValidityLeft)
	}
	if d <= 0 {
		return
	}
	c.w.hmu.Lock()
	c.w.hist.Pauses = append(c.w.hist.Pauses, model.PointPause{Client: c.idx, Time: c.w.now(), For: d, Point: string(p)})
	c.w.hmu.Unlock()
	c.sleep(ctx, time.Duration(d))
}

// errText is an error as a trace and a verdict show it: redsync joins
// per-node errors in channel arrival order, so the lines are sorted.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return sortedLines(err.Error())
}

// options are the go-redis options of client c's connection to node i:
// locksim's dialer, and what determinism needs.
func (w *world) options(c *client, i int) *redis.Options {
	o := &redis.Options{
		Addr:         nodeAddr(i).String(),
		PoolSize:     minPoolSize,
		ReadTimeout:  w.cfg.RPCTimeout,
		WriteTimeout: w.cfg.RPCTimeout,
	}
	if w.lock.Options != nil {
		w.lock.Options(o)
	}
	o.Addr = nodeAddr(i).String()
	o.Dialer = w.dialer(c, i)
	// go-redis draws its retry backoff from the global math/rand: retries
	// stay, without the backoff's jitter (they follow at once).
	o.MinRetryBackoff, o.MaxRetryBackoff = -1, -1
	// A client whose pool is exhausted waits on a timer from go-redis's
	// global sync.Pool, which another bubble may have made: a fatal error
	// ("select on synctest channel from outside bubble"). A pool this
	// large is never exhausted by one client thread.
	o.PoolSize = max(o.PoolSize, minPoolSize)
	o.ConnMaxLifetimeJitter = 0
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return o
}

// redigoPool is client c's redigo pool for node i: locksim's dialer, the
// config's RPC timeout for reads and writes, go-redis's dial timeout.
func (w *world) redigoPool(c *client, i int) *redigo.Pool {
	dial := w.dialer(c, i)
	addr := nodeAddr(i).String()
	return &redigo.Pool{MaxIdle: 4, Dial: func() (redigo.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		nc, err := dial(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return redigo.NewConn(nc, w.cfg.RPCTimeout, w.cfg.RPCTimeout), nil
	}}
}

// minPoolSize is the smallest go-redis pool a client gets (options).
const minPoolSize = 256

// dialer connects client c to node i through the coordinator.
func (w *world) dialer(c *client, i int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	want := nodeAddr(i).String()
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != want {
			return nil, fmt.Errorf("%w: %s dialled %q; node n%d is %s", errNotServed, c.name, addr, i, want)
		}
		ch, gone := make(chan dialResult, 1), new(atomic.Int64)
		w.post(inboxItem{kind: itemDial, at: time.Now(), client: c.idx, node: i, dial: ch, dialGone: gone})
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, r.err
			}
			return r.c, nil
		case <-ctx.Done():
			gone.Store(max(w.now(), 1))
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}
		}
	}
}

// fail ends the run with a finding of the lock's (a panic in it).
func (w *world) fail(c *client, kind model.ViolationKind, detail string) {
	w.hmu.Lock()
	if w.abort == nil {
		w.abort = &model.Abort{Kind: kind, Client: c.idx, Time: w.now(), Detail: detail}
	}
	w.hmu.Unlock()
	w.setErr(errAbort)
}

var errAbort = errors.New("the run aborted")
