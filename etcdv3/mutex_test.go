package etcdv3

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// etcd's own Mutex, over the shim and the simulated member: a second
// client waits for the first, and gets the lock when it is released.
func TestRealMutexWaitsForTheHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		d := newDirectMember(ctx)
		a, b := NewClient(&directConn{d}), NewClient(&directConn{d})
		defer closeAll(a, b)
		sa, sb := session(t, a), session(t, b)
		ma, mb := concurrency.NewMutex(sa, "/lock"), concurrency.NewMutex(sb, "/lock")
		if err := ma.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- mb.Lock(ctx) }()
		time.Sleep(10 * time.Second) // sessions keep their leases alive meanwhile
		select {
		case err := <-got:
			t.Fatalf("B's Lock returned %v while A held the lock", err)
		default:
		}
		if err := ma.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("B's Lock after A released: %v", err)
		}
		if mb.Header().Revision <= ma.Header().Revision {
			t.Fatalf("B's header revision %d is not after A's %d", mb.Header().Revision, ma.Header().Revision)
		}
		closeSessions(sa, sb)
	})
}

// Jepsen's etcd 3.4.3 finding, in etcd's own code: B waits for A; B's
// lease is revoked during the wait (as when its keep-alives stop for
// longer than the TTL); A releases. The fixed client (3.5 and later) looks
// at its own key once the wait ends and says the session expired; 3.4's
// Lock returns nil, and C, arriving later, gets the lock too: two holders.
// fixedMutex says which this build's client is (internal/outoftree builds
// this file against 3.4.3 with it false).
func TestRealMutexWhoseLeaseEndsDuringTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		d := newDirectMember(ctx)
		a, b, c := NewClient(&directConn{d}), NewClient(&directConn{d}), NewClient(&directConn{d})
		defer closeAll(a, b, c)
		sa, sb, sc := session(t, a), session(t, b), session(t, c)
		ma, mb, mc := concurrency.NewMutex(sa, "/lock"), concurrency.NewMutex(sb, "/lock"), concurrency.NewMutex(sc, "/lock")
		if err := ma.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- mb.Lock(ctx) }()
		time.Sleep(time.Second)
		if _, err := c.Revoke(ctx, sb.Lease()); err != nil { // B's lease ends while B waits
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := ma.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		berr := <-got
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cerr := mc.Lock(cctx)
		t.Logf("B's Lock returned %v, C's %v", berr, cerr)
		switch {
		case fixedMutex && (berr == nil || berr.Error() != sessionExpired || cerr != nil):
			t.Fatalf("B's Lock returned %v (want %q), C's %v (want nil)", berr, sessionExpired, cerr)
		case !fixedMutex && (berr != nil || cerr != nil):
			t.Fatalf("3.4's Mutex: B's Lock returned %v, C's %v; want both nil (two holders, Jepsen's finding)", berr, cerr)
		}
	})
}

// sessionExpired is the text of concurrency.ErrSessionExpired, which 3.4
// does not have.
const sessionExpired = "mutex: session is expired"

func session(t *testing.T, c *clientv3.Client) *concurrency.Session {
	t.Helper()
	s, err := concurrency.NewSession(c, concurrency.WithTTL(2))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closeSessions(ss ...*concurrency.Session) {
	for _, s := range ss {
		s.Close()
	}
}

func closeAll(cs ...*clientv3.Client) {
	for _, c := range cs {
		c.Close()
	}
}
