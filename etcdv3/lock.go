package etcdv3

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/sim/realredis"
	"github.com/locksim/locksim/variants"
)

// Client is what a lock's constructor is given for one simulated client
// thread: etcd's own client, connected to the simulated member, and what
// to wire the lock with.
type Client struct {
	*clientv3.Client
	// Name is the client thread's name in reports, "h0/t0".
	Name string
	// TTL is the lease TTL the world is drawn for (concurrency.WithTTL
	// takes whole seconds: TTLSeconds).
	TTL time.Duration
	// Rand is the client's own seeded stream, for the lock's random choices.
	Rand *rand.Rand
}

// TTLSeconds is TTL in whole seconds, at least 1, for concurrency.WithTTL.
func (c *Client) TTLSeconds() int { return max(1, int(c.TTL/time.Second)) }

// Lock is an etcd lock for locksim's engine (locksimtest.CheckLock,
// realredis.RunTest): newLocker builds one client thread's Locker from
// etcd's client, which is closed, with the Locker if it is an io.Closer,
// when the client stops.
func Lock(name string, newLocker func(c *Client) locksimtest.Locker) realredis.Lock {
	return realredis.Lock{Name: name, Summary: "a lock on etcd's own client", NewEtcd: func(c *realredis.EtcdClient) realredis.Locker {
		cl := NewClient(c.Conn)
		return &closing{Locker: newLocker(&Client{Client: cl, Name: c.Name, TTL: c.TTL, Rand: c.Rand}), client: cl}
	}}
}

// Check breaks an etcd lock from a test, as locksimtest.CheckRedis does a
// Redis one: newLocker wires etcd's client (c.Client) into the lock under
// test, and the default check sweeps seeds of faults against one
// simulated member, with the same report, repro files and replay lines.
//
//	func TestMyEtcdLock(t *testing.T) {
//		etcdv3.Check(t, func(c *etcdv3.Client) locksimtest.Locker {
//			return etcdv3.NewMutexLocker(c, "/my-lock")
//		}, locksimtest.Envelope(myEnvelope))
//	}
func Check(t *testing.T, newLocker func(c *Client) locksimtest.Locker, opts ...locksimtest.Option) {
	t.Helper()
	if newLocker == nil {
		t.Fatal("etcdv3.Check: the lock's constructor is nil")
	}
	locksimtest.CheckLock(t, Lock("etcd-lock", newLocker), opts...)
}

// closing closes the client it was made with after the Locker.
type closing struct {
	locksimtest.Locker
	client *clientv3.Client
}

func (c *closing) Close() error {
	if cl, ok := c.Locker.(io.Closer); ok {
		cl.Close()
	}
	return c.client.Close()
}

// MutexLocker is etcd's concurrency.Mutex as its documentation wires it: a
// Session (a lease kept alive in the background) and a Mutex on a prefix.
// A session whose lease ended is replaced before the next Lock. Lock
// reports no validity: the holder uses the lock until it releases it.
type MutexLocker struct {
	c       *Client
	prefix  string
	session *concurrency.Session
	mutex   *concurrency.Mutex
}

// NewMutexLocker is a MutexLocker on prefix.
func NewMutexLocker(c *Client, prefix string) *MutexLocker {
	return &MutexLocker{c: c, prefix: prefix}
}

func (l *MutexLocker) Lock(ctx context.Context) (time.Time, error) {
	if l.session != nil {
		select {
		case <-l.session.Done():
			l.session.Close()
			l.session = nil
		default:
		}
	}
	if l.session == nil {
		s, err := concurrency.NewSession(l.c.Client, concurrency.WithTTL(l.c.TTLSeconds()), concurrency.WithContext(ctx))
		if err != nil {
			return time.Time{}, err
		}
		l.session, l.mutex = s, concurrency.NewMutex(s, l.prefix)
	}
	return time.Time{}, l.mutex.Lock(ctx)
}

func (l *MutexLocker) Unlock(ctx context.Context) error { return l.mutex.Unlock(ctx) }

// Close ends the session (its lease is revoked if the member can be reached).
func (l *MutexLocker) Close() error {
	if l.session != nil {
		return l.session.Close()
	}
	return nil
}

// MutexEnvelope is what etcd's Mutex promises and assumes, from etcd's
// documentation, in locksim's terms: the etcd-mutex transliteration's
// (a single member that keeps every acknowledged write, lease clocks that
// do not step, rates within 10%, modest loss for liveness), and one more,
// UseWithinValidity: the lock is held only while the session's lease
// lives. A holder whose lease the member ended while it held (a pause, a
// partition, keep-alives lost for longer than the TTL) and that goes on
// using the resource has outlived its grant, which no lock without fencing
// survives; the grant's validity is the lease's life as the member saw it
// (model.Event.LeaseLapsed). A Lock that returns after its lease had
// already ended gets no such validity: what follows is the lock's fault.
//
// Liveness is promised only without message loss (or replies so late they
// count as lost): etcd's client made by NewClient has no retry
// interceptor (clientv3.New's retries reads on Unavailable), and a lost
// message stalls its gRPC connection until the keep-alive notices
// (realredis.DefaultKeepAliveDetect, 8 s), longer than locksim's liveness
// bound allows a waiter.
func MutexEnvelope() algorithm.Envelope {
	v, err := variants.Lookup("etcd-mutex")
	if err != nil {
		panic("etcdv3: " + err.Error())
	}
	e := v.Envelope
	e.Safety.UseWithinValidity = true
	e.Liveness.MessageLossMaxPPM = 1
	return e
}
