package etcdnode

import (
	"slices"
	"testing"
	"time"
)

func grant(t *testing.T, m *Member, now, ttl, id int64) int64 {
	t.Helper()
	resp, err := m.LeaseGrant(now, &LeaseGrantRequest{TTL: ttl, ID: id})
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	return resp.ID
}

func timeToLive(m *Member, now, id int64) *LeaseTimeToLiveResponse {
	resp, _ := m.LeaseTimeToLive(now, &LeaseTimeToLiveRequest{ID: id, Keys: true})
	return resp
}

func TestLeaseGrant(t *testing.T) {
	m := New(Options{})
	resp, err := m.LeaseGrant(0, &LeaseGrantRequest{TTL: 1})
	if err != nil || resp.TTL != 2 || resp.ID != 0x694d000000000001 || resp.Header.Revision != 1 {
		t.Fatalf("grant of 1 s = %s, %v; want TTL 2 (the minimum) and the first chosen ID", asJSON(resp), err)
	}
	if again, _ := m.LeaseGrant(0, &LeaseGrantRequest{TTL: 5}); again.ID != 0x694d000000000002 {
		t.Fatalf("second chosen ID %x", again.ID)
	}
	_, err = m.LeaseGrant(0, &LeaseGrantRequest{TTL: 5, ID: resp.ID})
	wantErr(t, err, ErrLeaseExist)
	_, err = m.LeaseGrant(0, &LeaseGrantRequest{TTL: MaxLeaseTTLSeconds + 1, ID: 9})
	wantErr(t, err, ErrLeaseTTLTooLarge)
	if big, err := m.LeaseGrant(5*sec, &LeaseGrantRequest{TTL: MaxLeaseTTLSeconds, ID: 9}); err != nil || timeToLive(m, 5*sec, big.ID).TTL <= 0 {
		t.Fatalf("the longest lease: %v %s", err, asJSON(timeToLive(m, 5*sec, 9)))
	}
	custom := New(Options{MinLeaseTTLSeconds: 5})
	if r, _ := custom.LeaseGrant(0, &LeaseGrantRequest{TTL: -3, ID: 1}); r.TTL != 5 {
		t.Fatalf("negative TTL with minimum 5 gave %d", r.TTL)
	}
}

func TestLeaseKeepAliveAndTimeToLive(t *testing.T) {
	m := New(Options{})
	id := grant(t, m, 0, 10, 3)
	mustPut(t, m, "k2", "v", id)
	mustPut(t, m, "k1", "v", id)
	ttl := timeToLive(m, 1*sec+1, id)
	if ttl.TTL != 8 || ttl.GrantedTTL != 10 || asJSON(ttl.Keys) != asJSON([][]byte{b("k1"), b("k2")}) {
		t.Fatalf("time to live 1 s in = %s; want 8 (8.99 s truncated)", asJSON(ttl))
	}
	ka, ok := m.LeaseKeepAlive(9*sec, 1, &LeaseKeepAliveRequest{ID: id})
	if !ok || ka.TTL != 10 || ka.ID != id || ka.Header.Revision != 3 {
		t.Fatalf("keep-alive = %s", asJSON(ka))
	}
	if got := timeToLive(m, 9*sec, id).TTL; got != 10 {
		t.Fatalf("after a keep-alive at 9 s the TTL is %d", got)
	}
	if got := timeToLive(m, 19*sec+sec/2, id).TTL; got != 0 {
		t.Fatalf("0.5 s before expiry the TTL is %d, want 0", got)
	}
	if gone := timeToLive(m, 0, 77); gone.TTL != -1 || gone.ID != 77 || gone.GrantedTTL != 0 {
		t.Fatalf("unknown lease: %s", asJSON(gone))
	}
	unknown, ok := m.LeaseKeepAlive(0, 1, &LeaseKeepAliveRequest{ID: 77})
	if !ok || unknown.TTL != 0 || unknown.ID != 77 {
		t.Fatalf("keep-alive of an unknown lease = %s", asJSON(unknown))
	}
}

func TestLeaseRevokeDeletesKeysInOneRevision(t *testing.T) {
	m := New(Options{})
	id := grant(t, m, 0, 10, 3)
	mustPut(t, m, "b", "v", id) // rev 2
	mustPut(t, m, "a", "v", id) // rev 3
	mustPut(t, m, "c", "v", 0)  // rev 4
	m.Watch(0, 1, &WatchCreateRequest{Key: b("a"), RangeEnd: b("\x00")})
	resp, err := m.LeaseRevoke(0, &LeaseRevokeRequest{ID: id})
	if err != nil || resp.Header.Revision != 5 {
		t.Fatalf("revoke = %s %v", asJSON(resp), err)
	}
	d := m.TakeDeliveries()
	if len(d) != 1 || len(d[0].Watch.Events) != 2 || string(d[0].Watch.Events[0].Kv.Key) != "a" || d[0].Watch.Events[1].Kv.ModRevision != 5 {
		t.Fatalf("deliveries %s", asJSON(d))
	}
	_, err = m.LeaseRevoke(0, &LeaseRevokeRequest{ID: id})
	wantErr(t, err, ErrLeaseNotFound)
	empty := grant(t, m, 0, 10, 4)
	if resp, _ := m.LeaseRevoke(0, &LeaseRevokeRequest{ID: empty}); resp.Header.Revision != 5 {
		t.Fatalf("revoking a lease without keys moved the revision to %d", resp.Header.Revision)
	}
}

func TestLeaseMovesWithPutAndDelete(t *testing.T) {
	m := New(Options{})
	l1, l2 := grant(t, m, 0, 10, 1), grant(t, m, 0, 10, 2)
	mustPut(t, m, "k", "v", l1)
	mustPut(t, m, "k", "v", l2) // moves to l2
	mustPut(t, m, "j", "v", l1)
	m.DeleteRange(0, &DeleteRangeRequest{Key: b("j")}) // leaves l1
	if k1, k2 := timeToLive(m, 0, l1).Keys, timeToLive(m, 0, l2).Keys; len(k1) != 0 || asJSON(k2) != asJSON([][]byte{b("k")}) {
		t.Fatalf("keys of l1 %q, l2 %q", k1, k2)
	}
	m.LeaseRevoke(0, &LeaseRevokeRequest{ID: l1})
	if got := mustRange(t, m, &RangeRequest{Key: b("k")}); len(got.Kvs) != 1 {
		t.Fatalf("revoking the old lease deleted the moved key")
	}
	mustPut(t, m, "k", "v", 0) // detaches from l2
	m.LeaseRevoke(0, &LeaseRevokeRequest{ID: l2})
	if got := mustRange(t, m, &RangeRequest{Key: b("k")}); len(got.Kvs) != 1 {
		t.Fatalf("revoking l2 deleted a key no longer on it")
	}
}

func TestExpireDue(t *testing.T) {
	m := New(Options{})
	late := grant(t, m, 0, 5, 20)
	early := grant(t, m, 0, 3, 30)
	tie := grant(t, m, 0, 3, 10)
	mustPut(t, m, "e", "v", early)
	mustPut(t, m, "t", "v", tie)
	mustPut(t, m, "l", "v", late) // rev 4
	if got := m.ExpireDue(3*sec - 1); len(got) != 0 {
		t.Fatalf("expired early: %v", got)
	}
	ls, _ := m.LeaseLeases(0, &LeaseLeasesRequest{})
	if ids := []int64{ls.Leases[0].ID, ls.Leases[1].ID, ls.Leases[2].ID}; !slices.Equal(ids, []int64{10, 30, 20}) {
		t.Fatalf("leases by expiry then ID: %v", ids)
	}
	// A keep-alive of an expired lease waits for the revocation.
	if resp, ok := m.LeaseKeepAlive(3*sec, 9, &LeaseKeepAliveRequest{ID: early}); ok || resp != nil {
		t.Fatalf("keep-alive of an expired lease answered at once: %s", asJSON(resp))
	}
	got := m.ExpireDue(3 * sec)
	want := []Expired{{LeaseID: 10, Revision: 5}, {LeaseID: 30, Revision: 6}}
	if !slices.Equal(got, want) {
		t.Fatalf("ExpireDue = %v, want %v", got, want)
	}
	d := m.TakeDeliveries()
	if len(d) != 1 || d[0].Stream != 9 || d[0].KeepAlive.TTL != 0 || d[0].KeepAlive.ID != early || d[0].KeepAlive.Header.Revision != 4 {
		t.Fatalf("waiting keep-alive: %s", asJSON(d))
	}
	if r := mustRange(t, m, &RangeRequest{Key: b("a"), RangeEnd: b("\x00")}); !slices.Equal(keysOf(r.Kvs), []string{"l"}) {
		t.Fatalf("left: %q", keysOf(r.Kvs))
	}
}

func TestRestartKeepsStateAndExtendsLeases(t *testing.T) {
	m := New(Options{})
	id := grant(t, m, 0, 10, 1)
	mustPut(t, m, "k", "v", id)
	m.Watch(0, 1, &WatchCreateRequest{Key: b("k")})
	m.LeaseKeepAlive(12*sec, 2, &LeaseKeepAliveRequest{ID: id}) // expired: waits
	m.Restart(20 * sec)
	if m.ExpireDue(30 * sec); m.Revision() != 2 {
		t.Fatalf("expired before now + election timeout + TTL")
	}
	if ttl := timeToLive(m, 20*sec, id); ttl.TTL != 11 || ttl.Header.RaftTerm != 3 {
		t.Fatalf("after restart: %s", asJSON(ttl))
	}
	mustPut(t, m, "k", "v2", id)
	if d := m.TakeDeliveries(); len(d) != 0 {
		t.Fatalf("a restart kept watches or waiting keep-alives: %s", asJSON(d))
	}
	if got := m.ExpireDue(31 * sec); len(got) != 1 || m.Revision() != 4 {
		t.Fatalf("ExpireDue at 31 s: %v, revision %d", got, m.Revision())
	}
	slow := New(Options{ElectionTimeout: 3 * time.Second})
	grant(t, slow, 0, 10, 1)
	slow.Restart(100 * sec)
	if ttl := timeToLive(slow, 100*sec, 1); ttl.TTL != 13 {
		t.Fatalf("election timeout 3 s: TTL %d", ttl.TTL)
	}
}

func TestWipe(t *testing.T) {
	m := New(Options{})
	first := grant(t, m, 0, 10, 0)
	mustPut(t, m, "k", "v", first)
	m.Restart(0)
	m.Wipe(0)
	r := mustRange(t, m, &RangeRequest{Key: b("k")})
	if len(r.Kvs) != 0 || r.Header.Revision != 1 || r.Header.RaftTerm != 2 || timeToLive(m, 0, first).TTL != -1 {
		t.Fatalf("after wipe: %s", asJSON(r))
	}
	if again := grant(t, m, 0, 10, 0); again == first {
		t.Fatalf("a wipe reused chosen lease ID %x", again)
	}
}
