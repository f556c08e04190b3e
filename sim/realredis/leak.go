package realredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/locksim/locksim/model"
)

// What a library reports against what the nodes grant: a Lock that returns
// failure while the key it wrote in that call holds the lock in its
// client's name on most of the nodes it asked is a grant reported as a
// failure (model.LeakedLock). The client asks the coordinator as its Lock
// returns (a probe in the inbox, answered at once, as a dial is); the
// coordinator reads the nodes at that instant. Which key is the lock's is
// the library's business: a live key whose value only this client sent,
// during this call, is its.

// A failure is a definite answer only when the library heard from the
// nodes: a Lock whose caller's deadline passed, or that failed on the
// network (a timeout, a reset, a refused dial), does not know whether it
// got the lock, and is not judged.

// unknownOutcome reports whether err is a failure of the network or of
// the caller's context, after which the Lock's outcome is unknown to it.
func unknownOutcome(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// sentValues is what one client sent during its Lock calls (the only
// values a probe asks about, since it asks about the call that failed):
// each argument long enough to be a lock value (8 bytes or more), with the
// last instant it was sent, and the last instant it asked each node
// anything.
type sentValues struct {
	// at holds each value's last instant by pointer: a value sent again
	// (a retry, a release) is updated through a lookup, which makes no
	// string of the bytes; only a value new to the client allocates.
	at    map[string]*int64
	asked []int64 // by node; -1: never
}

// minValueLen is the shortest argument taken for a lock value: shorter
// ones ("1", "NX", a TTL) are no one's.
const minValueLen = 8

// inLock reports whether the client is inside a Lock call: read by the
// library's goroutine that writes a request, as it writes it.
func (c *client) inLock() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.op == model.AcquireCall
}

// noteSent records what client c sent node n at now, during a Lock call.
func (w *world) noteSent(c, n int, args [][]byte, now int64) {
	if w.sent == nil {
		w.sent = make([]sentValues, len(w.clients))
	}
	s := &w.sent[c]
	if s.at == nil {
		s.at = map[string]*int64{}
		s.asked = make([]int64, len(w.nodes))
		for i := range s.asked {
			s.asked[i] = -1
		}
	}
	s.asked[n] = now
	for _, a := range args[1:] {
		if len(a) < minValueLen {
			continue
		}
		if at := s.at[string(a)]; at != nil {
			*at = now
			continue
		}
		at := now
		s.at[string(a)] = &at
	}
}

// probe is a client's question as its Lock returned failure: did the
// call, begun at from, leave its key holding the lock?
type probe struct {
	unlock   bool // an Unlock that returned success as a refresher ran, not a failed Lock
	from     int64
	deadline int64 // the caller's deadline, true time (0: none)
	reason   string
	done     chan struct{}
}

// probeLeak asks the coordinator whether the Lock client c called at from,
// which returned failure (reason), left the lock in its name; the
// coordinator records a leak in the history if so, and, when the call
// returned before the lock's retry promise was up, watches whether the
// lock was free while the promise ran (gaveup.go). deadline is the call's
// deadline in true time (0: none).
func (c *client) probeLeak(from, deadline int64, reason string) {
	c.probe(&probe{from: from, deadline: deadline, reason: reason})
}

// probe asks the coordinator p, and waits for its answer.
func (c *client) probe(p *probe) {
	if c.w.lock.New == nil {
		return // etcd's leases are the member's, not a key's
	}
	p.done = make(chan struct{})
	c.w.post(inboxItem{kind: itemProbe, client: c.idx, probe: p})
	<-p.done
}

// answerProbe reads the nodes client it.client asked during its failed
// Lock, at this instant, and records a leak when the key it wrote in that
// call holds the lock on most of them.
func (w *world) answerProbe(it inboxItem) {
	p := it.probe
	defer close(p.done)
	if it.client >= len(w.sent) || w.sent[it.client].at == nil || w.ended {
		return
	}
	now := w.now()
	mine := &w.sent[it.client]
	var asked int
	var leaked []string
	var until int64
	for i, n := range w.nodes {
		if mine.asked[i] < p.from {
			continue
		}
		asked++
		if n.down > 0 {
			continue
		}
		local := int64(n.local(now))
		for _, e := range n.store.Keys(local) {
			if at := mine.at[e.Value]; at == nil || *at < p.from || w.sentByOther(it.client, e.Value) {
				continue
			}
			leaked = append(leaked, fmt.Sprintf("n%d", i))
			if e.ExpireAt > 0 {
				until = max(until, now+(e.ExpireAt-local))
			}
			break
		}
	}
	if asked == 0 || 2*len(leaked) <= asked {
		if !p.unlock {
			w.watchGaveUp(it.client, p, now)
		}
		return
	}
	w.hmu.Lock()
	w.hist.Leaks = append(w.hist.Leaks, model.Leak{Unlock: p.unlock, Client: it.client, Time: now, Nodes: leaked, Asked: asked, Until: until, Reason: p.reason})
	w.hmu.Unlock()
}

// sentByOther reports whether a client other than c sent value: then it is
// not c's alone.
func (w *world) sentByOther(c int, value string) bool {
	for i := range w.sent {
		if i != c && w.sent[i].at != nil {
			if _, ok := w.sent[i].at[value]; ok {
				return true
			}
		}
	}
	return false
}
