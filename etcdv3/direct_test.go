package etcdv3

// directConn is a test fixture: a Conn that applies every request on the
// member at once, under a mutex, at the bubble's clock, with an expiry
// loop on a ticker. It is not the simulator (no latency, no faults, and
// goroutine arrival orders requests); it checks that etcd's own client
// code runs against the member and the shim, and what it does when a
// lease ends during a wait.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/sim/etcdnode"
)

type directMember struct {
	latency  time.Duration // each way, for a Call (the benchmark's baseline)
	requests atomic.Int64  // calls and stream messages sent

	mu      sync.Mutex
	m       *etcdnode.Member
	epoch   time.Time
	streams map[uint64]*directStream
	next    uint64
	paused  map[*directConn]time.Time // a paused client's messages are dropped
}

func newDirectMember(ctx context.Context) *directMember {
	d := &directMember{m: etcdnode.New(etcdnode.Options{}), epoch: time.Now(), streams: map[uint64]*directStream{}, paused: map[*directConn]time.Time{}}
	go func() {
		t := time.NewTicker(etcdnode.ExpiryCheckPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			d.mu.Lock()
			d.m.ExpireDue(d.now())
			d.deliver()
			d.mu.Unlock()
		}
	}()
	return d
}

func (d *directMember) now() int64 { return int64(time.Since(d.epoch)) }

// deliver puts the member's own messages on their streams (d.mu held).
func (d *directMember) deliver() {
	for _, dl := range d.m.TakeDeliveries() {
		if s := d.streams[dl.Stream]; s != nil {
			if dl.Watch != nil {
				s.push(dl.Watch)
			} else {
				s.push(dl.KeepAlive)
			}
		}
	}
}

type directConn struct{ d *directMember }

// World is the member: the clients of one test share it (NewClient).
func (c *directConn) World() any { return c.d }

func (c *directConn) pausedNow() bool {
	until, ok := c.d.paused[c]
	return ok && time.Now().Before(until)
}

func (c *directConn) Call(ctx context.Context, req any) (any, error) {
	d := c.d
	d.requests.Add(1)
	if d.latency > 0 {
		time.Sleep(d.latency)
		defer time.Sleep(d.latency)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	var resp any
	var err error
	switch r := req.(type) {
	case *etcdnode.RangeRequest:
		resp, err = d.m.Range(now, r)
	case *etcdnode.PutRequest:
		resp, err = d.m.Put(now, r)
	case *etcdnode.DeleteRangeRequest:
		resp, err = d.m.DeleteRange(now, r)
	case *etcdnode.TxnRequest:
		resp, err = d.m.Txn(now, r)
	case *etcdnode.LeaseGrantRequest:
		resp, err = d.m.LeaseGrant(now, r)
	case *etcdnode.LeaseRevokeRequest:
		resp, err = d.m.LeaseRevoke(now, r)
	case *etcdnode.LeaseTimeToLiveRequest:
		resp, err = d.m.LeaseTimeToLive(now, r)
	case *etcdnode.LeaseLeasesRequest:
		resp, err = d.m.LeaseLeases(now, r)
	default:
		panic("directConn: unexpected request")
	}
	d.deliver()
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (c *directConn) Open(ctx context.Context, kind etcdnode.StreamKind) (etcdnode.Stream, error) {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	s := &directStream{c: c, id: d.next, kind: kind, ctx: ctx, ready: make(chan struct{}, 1)}
	d.streams[s.id] = s
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.m.CloseStream(s.id)
		delete(d.streams, s.id)
	})
	return s, nil
}

type directStream struct {
	c    *directConn
	id   uint64
	kind etcdnode.StreamKind
	ctx  context.Context

	mu    sync.Mutex
	out   []any
	ready chan struct{}
}

func (s *directStream) push(m any) {
	s.mu.Lock()
	s.out = append(s.out, m)
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *directStream) Send(msg any) error {
	d := s.c.d
	d.requests.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.c.pausedNow() {
		return nil // a paused process sends nothing
	}
	now := d.now()
	switch m := msg.(type) {
	case *etcdnode.LeaseKeepAliveRequest:
		if resp, ok := d.m.LeaseKeepAlive(now, s.id, m); ok {
			s.push(resp)
		}
	case *etcdnode.WatchRequest:
		switch {
		case m.Create != nil:
			for _, r := range d.m.Watch(now, s.id, m.Create) {
				s.push(r)
			}
		case m.Cancel != nil:
			if r := d.m.CancelWatch(now, s.id, m.Cancel.WatchId); r != nil {
				s.push(r)
			}
		}
	}
	d.deliver()
	return nil
}

func (s *directStream) Recv() (any, error) {
	for {
		s.mu.Lock()
		if len(s.out) > 0 {
			m := s.out[0]
			s.out = s.out[1:]
			s.mu.Unlock()
			return m, nil
		}
		s.mu.Unlock()
		if s.ctx.Err() != nil {
			return nil, &etcdnode.Error{Code: etcdnode.CodeCanceled, Msg: "context canceled"}
		}
		select {
		case <-s.ready:
		case <-s.ctx.Done():
		}
	}
}

func (s *directStream) CloseSend() error { return nil }
