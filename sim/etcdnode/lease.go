package etcdnode

import (
	"math"
	"slices"
	"time"
)

// lease is one of etcd's lessor leases, timed on the member's clock.
type lease struct {
	id         int64
	ttlSeconds int64               // as granted, raised to the minimum
	expiry     int64               // member ns; expired from then on (Lease.expired: remaining ≤ 0)
	keys       map[string]struct{} // attached keys; listed sorted
}

// waitingKeepAlive is a keep-alive of an expired lease: etcd's Renew waits
// for the revocation, then answers TTL 0.
type waitingKeepAlive struct {
	stream uint64
	resp   *LeaseKeepAliveResponse // header filled when the request came, as etcd's
}

// Expired is a lease ExpireDue revoked, and the store revision after its
// keys were deleted (unchanged if it had none).
type Expired struct {
	LeaseID  int64
	Revision int64
}

// expiryAt is now + extend + ttl seconds, saturating: a 9e9 s lease does
// not overflow into the past.
func expiryAt(now, ttlSeconds int64, extend time.Duration) int64 {
	d := int64(extend)
	if ttlSeconds > (math.MaxInt64-d)/int64(time.Second) {
		return math.MaxInt64
	}
	d += ttlSeconds * int64(time.Second)
	if now > math.MaxInt64-d {
		return math.MaxInt64
	}
	return now + d
}

// LeaseGrant grants a lease (lessor.Grant). ID 0 lets the member choose one.
func (m *Member) LeaseGrant(now int64, r *LeaseGrantRequest) (*LeaseGrantResponse, error) {
	id := r.ID
	if id == 0 {
		id = m.chooseLeaseID()
	}
	switch {
	case r.TTL > MaxLeaseTTLSeconds:
		return nil, ErrLeaseTTLTooLarge
	case m.leases[id] != nil:
		return nil, ErrLeaseExist
	}
	ttl := max(r.TTL, m.opts.MinLeaseTTLSeconds)
	m.leases[id] = &lease{id: id, ttlSeconds: ttl, expiry: expiryAt(now, ttl, 0), keys: map[string]struct{}{}}
	return &LeaseGrantResponse{Header: m.header(m.store.rev), ID: id, TTL: ttl}, nil
}

// chooseLeaseID is the member ID's low 16 bits over a counter, positive as
// etcd's (whose low bits come from its clock instead), skipping IDs taken.
func (m *Member) chooseLeaseID() int64 {
	for {
		m.leaseSeq++
		id := int64((MemberID&0xffff)<<48|m.leaseSeq) & math.MaxInt64
		if id != 0 && m.leases[id] == nil {
			return id
		}
	}
}

// LeaseRevoke revokes a lease and deletes its keys in one revision,
// recording the deliveries that causes.
func (m *Member) LeaseRevoke(now int64, r *LeaseRevokeRequest) (*LeaseRevokeResponse, error) {
	if m.leases[r.ID] == nil {
		return nil, ErrLeaseNotFound
	}
	m.revoke(r.ID)
	return &LeaseRevokeResponse{Header: m.header(m.store.rev)}, nil
}

// revoke deletes the lease's keys in sorted order (lessor.Revoke), forgets
// it, and answers the keep-alives that waited for it with TTL 0.
func (m *Member) revoke(id int64) {
	l := m.leases[id]
	w := m.beginWrite()
	for _, key := range l.sortedKeys() {
		w.deleteRange(keyRange{key: []byte(key)})
	}
	delete(m.leases, id)
	w.end()
	still := m.waiting[:0]
	for _, k := range m.waiting {
		if k.resp.ID == id {
			m.outbox = append(m.outbox, Delivery{Stream: k.stream, KeepAlive: k.resp})
		} else {
			still = append(still, k)
		}
	}
	m.waiting = still
}

// LeaseKeepAlive renews a lease (a message on keep-alive stream stream):
// it lasts TTL from now, and the answer carries the granted TTL, or 0 when
// the lease is gone. A lease already expired but not yet revoked is answered
// only at its revocation, as a Delivery: then ok is false and resp nil.
func (m *Member) LeaseKeepAlive(now int64, stream uint64, r *LeaseKeepAliveRequest) (resp *LeaseKeepAliveResponse, ok bool) {
	resp = &LeaseKeepAliveResponse{Header: m.header(m.store.rev), ID: r.ID}
	l := m.leases[r.ID]
	switch {
	case l == nil:
		return resp, true
	case l.expiry <= now:
		m.waiting = append(m.waiting, waitingKeepAlive{stream, resp})
		return nil, false
	}
	l.expiry = expiryAt(now, l.ttlSeconds, 0)
	resp.TTL = l.ttlSeconds
	return resp, true
}

// LeaseTimeToLive reports a lease: TTL is the whole seconds left, truncated
// as etcd's int64(Remaining().Seconds()), -1 for no such lease; Keys, sorted,
// if asked for.
func (m *Member) LeaseTimeToLive(now int64, r *LeaseTimeToLiveRequest) (*LeaseTimeToLiveResponse, error) {
	resp := &LeaseTimeToLiveResponse{Header: m.header(m.store.rev), ID: r.ID, TTL: -1}
	l := m.leases[r.ID]
	if l == nil {
		return resp, nil
	}
	resp.TTL = (l.expiry - now) / int64(time.Second)
	resp.GrantedTTL = l.ttlSeconds
	if r.Keys {
		resp.Keys = make([][]byte, 0, len(l.keys))
		for _, k := range l.sortedKeys() {
			resp.Keys = append(resp.Keys, []byte(k))
		}
	}
	return resp, nil
}

// LeaseLeases lists the leases, soonest expiry first (etcd sorts by
// remaining time; ties here by ID).
func (m *Member) LeaseLeases(now int64, r *LeaseLeasesRequest) (*LeaseLeasesResponse, error) {
	ls := m.leasesByExpiry()
	resp := &LeaseLeasesResponse{Header: m.header(m.store.rev), Leases: make([]*LeaseStatus, len(ls))}
	for i, l := range ls {
		resp.Leases[i] = &LeaseStatus{ID: l.id}
	}
	return resp, nil
}

// ExpireDue is one check of etcd's lessor loop, which runs every
// ExpiryCheckPeriod of member time: it revokes every lease expired at now
// (at most 500 per check, as etcd), soonest expiry first and ties by ID,
// each in its own revision, and records the deliveries that causes.
func (m *Member) ExpireDue(now int64) []Expired {
	var out []Expired
	for _, l := range m.leasesByExpiry() {
		if l.expiry > now || len(out) == revokeLimitPerCheck {
			break
		}
		m.revoke(l.id)
		out = append(out, Expired{LeaseID: l.id, Revision: m.store.rev})
	}
	return out
}

func (m *Member) leasesByExpiry() []*lease {
	ls := make([]*lease, 0, len(m.leases))
	for _, l := range m.leases {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b *lease) int {
		if c := cmpInt64(a.expiry, b.expiry); c != 0 {
			return c
		}
		return cmpInt64(a.id, b.id)
	})
	return ls
}

func (l *lease) sortedKeys() []string {
	keys := make([]string, 0, len(l.keys))
	for k := range l.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// attach and detach keep a lease's key set; lease 0 is none, and a lease
// already gone has nothing to keep (lessor.Attach/Detach fail there; the
// store's own calls never meet that).
func (m *Member) attach(id int64, key []byte) {
	if l := m.leases[id]; l != nil {
		l.keys[string(key)] = struct{}{}
	}
}

func (m *Member) detach(id int64, key []byte) {
	if l := m.leases[id]; l != nil {
		delete(l.keys, string(key))
	}
}
