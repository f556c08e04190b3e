package etcdv3

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
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
		c.CloseOnStop(cl)
		return newLocker(&Client{Client: cl, Name: c.Name, TTL: c.TTL, Rand: c.Rand})
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

// MutexLocker is etcd's concurrency.Mutex as its documentation wires it: a
// Session (a lease kept alive in the background) and a Mutex on a prefix.
// A session whose lease ended is replaced before the next Lock. Lock
// reports no validity: the holder uses the lock until it releases it.
//
// It is a locksimtest.Fencer: its FencingToken is the hold's Token, the
// key's create revision unless NewFencedMutexLocker chose another. The
// token is used only where the lock's envelope has the resource check it
// (FencedMutexEnvelope).
type MutexLocker struct {
	c       *Client
	prefix  string
	token   Token
	session *concurrency.Session
	mutex   *concurrency.Mutex
}

// NewMutexLocker is a MutexLocker on prefix.
func NewMutexLocker(c *Client, prefix string) *MutexLocker {
	return NewFencedMutexLocker(c, prefix, KeyCreateRevision)
}

// NewFencedMutexLocker is a MutexLocker on prefix whose holds carry the
// fencing token read by token (KeyCreateRevision or HeaderRevision).
func NewFencedMutexLocker(c *Client, prefix string, token Token) *MutexLocker {
	if token == nil {
		token = KeyCreateRevision
	}
	return &MutexLocker{c: c, prefix: prefix, token: token}
}

// Token reads a held Mutex's fencing token, as its user would.
type Token func(m *concurrency.Mutex) int64

// KeyCreateRevision is the create revision of the Mutex's own key, the
// token etcd's documentation names ("the revision of the lock key"): the
// Mutex keeps it and compares it in IsOwner, so it costs no call. Holders
// of one prefix get strictly growing create revisions, even two that
// hold at once.
func KeyCreateRevision(m *concurrency.Mutex) int64 {
	if c, ok := m.IsOwner().TargetUnion.(*pb.Compare_CreateRevision); ok {
		return c.CreateRevision
	}
	return 0
}

// HeaderRevision is the store revision in the header of the response that
// granted the lock (Mutex.Header, what etcd's Lock RPC returns). It grows
// from one holder to the next, but two Locks answered at the same
// revision get the same one.
func HeaderRevision(m *concurrency.Mutex) int64 {
	if h := m.Header(); h != nil {
		return h.Revision
	}
	return 0
}

// FencingToken is the token of the hold the last Lock gave.
func (l *MutexLocker) FencingToken() uint64 {
	if l.mutex == nil {
		return 0
	}
	return uint64(max(0, l.token(l.mutex)))
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
	e := etcdEnvelope("etcd-mutex")
	e.Safety.UseWithinValidity = true
	return e
}

// FencedMutexEnvelope is what etcd's Mutex promises with its fencing
// token checked by the resource (NewFencedMutexLocker): the etcd-fenced
// transliteration's envelope, resource safety and liveness but not mutual
// exclusion, with MutexEnvelope's narrower liveness. It does not need
// UseWithinValidity: a holder that outlived its lease is refused by the
// resource once a later holder has used it.
func FencedMutexEnvelope() algorithm.Envelope { return etcdEnvelope("etcd-fenced") }

// etcdEnvelope is the envelope of the named transliteration, with
// liveness promised only without message loss (MutexEnvelope says why).
func etcdEnvelope(name string) algorithm.Envelope {
	v, err := variants.Lookup(name)
	if err != nil {
		panic("etcdv3: " + err.Error())
	}
	e := v.Envelope
	e.Liveness.MessageLossMaxPPM = 1
	return e
}
