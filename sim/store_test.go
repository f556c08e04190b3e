package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"

	"pgregory.net/rapid"
)

// storeModel is the node store as the design states it, written plainly:
// versioned items, a node-side TTL on the node's own clock, versions never
// reused within a node (or restarting per key when the option says so),
// crash refuses, a volatile restart forgets, a quarantined node refuses
// writes for one TTL after a restart.
type storeModel struct {
	entries     map[string]modelEntry
	lastVersion uint64
	restarting  bool
	up          bool
	quarantine  bool
	restartAt   int64 // true time; -1: never restarted
	ttl         int64
	// etcd-style: the store revision, the leases, the last lease ID.
	revision  uint64
	leases    map[uint64]modelLease
	lastLease uint64
}

type modelLease struct{ ttl, expireAt int64 }

type modelEntry struct {
	owner    string
	expiry   int64
	version  uint64
	expireAt int64 // node clock; 0: never
	counter  uint64
	// createRev and lease: an etcd-style key's; 0 for the others.
	createRev, lease uint64
}

func (m *storeModel) live(key string, nodeNow int64) (modelEntry, bool) {
	e, ok := m.entries[key]
	if !ok || (e.expireAt != 0 && nodeNow >= e.expireAt) {
		return modelEntry{}, false
	}
	return e, true
}

// newVersion is the version a write gets: node-wide and ever increasing, or
// with restarting versions, 1 for a key created anew and one more than the
// key's current version for an overwrite.
func (m *storeModel) newVersion(current modelEntry, live bool) uint64 {
	if m.restarting {
		if live {
			return current.version + 1
		}
		return 1
	}
	m.lastVersion++
	return m.lastVersion
}

func (m *storeModel) item(key string, e modelEntry) algorithm.Item {
	return algorithm.Item{Key: key, Owner: e.owner, Expiry: time.Duration(e.expiry), Version: e.version, CreateRevision: e.createRev}
}

// expireLeases ends the leases whose TTL ran out by node time nodeNow,
// and deletes their keys, each deletion a new revision.
func (m *storeModel) expireLeases(nodeNow int64) {
	for id, l := range m.leases {
		if nodeNow >= l.expireAt {
			m.endLease(id)
		}
	}
}

func (m *storeModel) endLease(id uint64) {
	for k, e := range m.entries {
		if e.lease == id {
			delete(m.entries, k)
			m.revision++
		}
	}
	delete(m.leases, id)
}

// applyEtcd is the etcd-style primitives, as etcd states them.
func (m *storeModel) applyEtcd(r request, nodeNow int64) reply {
	switch r.op {
	case opLeaseGrant:
		m.lastLease++
		m.leases[m.lastLease] = modelLease{r.ttl, nodeNow + r.ttl}
		return reply{counter: m.lastLease}
	case opLeaseKeepAlive:
		l, ok := m.leases[r.num]
		if !ok {
			return reply{err: errLeaseNotFound}
		}
		m.leases[r.num] = modelLease{l.ttl, nodeNow + l.ttl}
		return reply{}
	case opLeaseRevoke:
		if _, ok := m.leases[r.num]; !ok {
			return reply{err: errLeaseNotFound}
		}
		m.endLease(r.num)
		return reply{}
	case opCreateWithLease:
		if e, ok := m.live(r.key, nodeNow); ok {
			return reply{err: errKeyAlreadyExists, item: m.item(r.key, e)}
		}
		if _, ok := m.leases[r.num]; !ok {
			return reply{err: errLeaseNotFound}
		}
		m.revision++
		e := modelEntry{owner: r.owner, version: m.newVersion(modelEntry{}, false), createRev: m.revision, lease: r.num}
		m.entries[r.key] = e
		return reply{item: m.item(r.key, e)}
	case opFirstCreated, opLastCreatedBefore:
		var best string
		found := false
		for k, e := range m.entries {
			if e.createRev == 0 || !strings.HasPrefix(k, r.key) || (r.op == opLastCreatedBefore && e.createRev >= r.num) {
				continue
			}
			b := m.entries[best]
			if !found || (r.op == opFirstCreated && e.createRev < b.createRev) || (r.op == opLastCreatedBefore && e.createRev > b.createRev) {
				best, found = k, true
			}
		}
		if !found {
			return reply{err: errKeyNotFound}
		}
		return reply{item: m.item(best, m.entries[best])}
	case opDelete:
		if _, ok := m.entries[r.key]; ok {
			delete(m.entries, r.key)
			m.revision++
		}
		return reply{}
	}
	panic("not an etcd op")
}

// apply is the reply the model expects to r at true time now, node time nodeNow.
func (m *storeModel) apply(r request, now, nodeNow int64) reply {
	if !m.up {
		return reply{err: errServerDown}
	}
	writes := []op{opWriteIfAbsentOrSame, opSetIfAbsentTTL, opIncrement, opRaiseCounter, opExtendIfOwner,
		opLeaseGrant, opLeaseKeepAlive, opCreateWithLease}
	if m.quarantine && m.restartAt >= 0 && now < m.restartAt+m.ttl && slices.Contains(writes, r.op) {
		return reply{err: errServerDown}
	}
	m.expireLeases(nodeNow)
	e, ok := m.live(r.key, nodeNow)
	if !ok {
		delete(m.entries, r.key)
	}
	switch r.op {
	case opWriteIfAbsentOrSame:
		if ok && e.owner != r.owner {
			return reply{err: errKeyAlreadyExists}
		}
		n := modelEntry{owner: r.owner, expiry: r.expiry, version: m.newVersion(e, ok)}
		m.entries[r.key] = n
		return reply{item: m.item(r.key, n)}
	case opRead:
		if !ok {
			return reply{err: errKeyNotFound}
		}
		return reply{item: m.item(r.key, e)}
	case opRemove:
		if !ok || e.version != r.version {
			return reply{err: errKeyVersionChanged}
		}
		delete(m.entries, r.key)
		return reply{}
	case opSetIfAbsentTTL:
		if ok {
			return reply{err: errKeyAlreadyExists, item: m.item(r.key, e)}
		}
		n := modelEntry{owner: r.owner, version: m.newVersion(e, false), expireAt: nodeNow + r.ttl}
		m.entries[r.key] = n
		return reply{item: m.item(r.key, n)}
	case opCompareAndDelete:
		if !ok || e.owner != r.owner {
			return reply{err: errNotOwner}
		}
		delete(m.entries, r.key)
		return reply{}
	case opIncrement:
		if !ok {
			e = modelEntry{version: m.newVersion(e, false)}
		}
		e.counter++
		m.entries[r.key] = e
		return reply{counter: e.counter}
	case opExtendIfOwner:
		if !ok || e.owner != r.owner {
			return reply{err: errNotOwner}
		}
		e.expireAt = nodeNow + r.ttl
		m.entries[r.key] = e
		return reply{}
	case opLeaseGrant, opLeaseKeepAlive, opLeaseRevoke, opCreateWithLease, opFirstCreated, opLastCreatedBefore, opDelete:
		return m.applyEtcd(r, nodeNow)
	case opRaiseCounter:
		if !ok {
			e = modelEntry{version: m.newVersion(e, false)}
		}
		e.counter = max(e.counter, r.num)
		m.entries[r.key] = e
		return reply{counter: e.counter}
	}
	panic("unknown op")
}

// storeWorld is a one-node world whose node is stepped directly, one request
// at a time, the reply read back from the event queue.
func storeWorld(t *rapid.T, restarting, quarantine bool, drift int64) *world {
	c := DefaultConfig()
	c.Nodes, c.Replication, c.Hosts = 1, 1, 1
	c.RestartingVersions = restarting
	c.TTL = 50 * time.Millisecond
	v := naive
	v.Envelope.Safety.RestartQuarantine = quarantine
	plan := faults.Plan{Clocks: []faults.Clock{{Kind: faults.NodeProcess, Index: 0, DriftPPM: drift}}}
	w, err := newWorld(Scenario{Config: c, Variant: v, Plan: plan, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.q = queue{}
	return w
}

func (w *world) stepNode(r request) reply {
	i := w.newMsg()
	// The slot's reply is stale, as in a reused slot: the node must overwrite all of it.
	stale := reply{err: errNotOwner, item: algorithm.Item{Key: "stale", Owner: "stale", Expiry: 9, Version: 9}, counter: 9}
	w.msgs[i] = message{from: clientEndpoint(0), to: 0, call: 1, req: r, rep: stale}
	w.nodeStep(0, &w.msgs[i], i)
	if w.q.len() != 1 {
		panic(fmt.Sprintf("a node step should send exactly one reply, queue has %d events", w.q.len()))
	}
	e := w.q.pop()
	return w.msgs[e.a].rep
}

// crashNode crashes node 0 through the fault plan's own code path, as plan
// event 0 would; restart is endFault.
func (w *world) crashNode(wipe bool) {
	w.plan.Events = []faults.Event{{Kind: faults.Crash, Node: 0, For: time.Second, Wipe: wipe}}
	w.startFault(0)
	w.q = queue{} // drop the scheduled restart: the test restarts by hand
}

func TestStoreMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		restarting := rapid.Bool().Draw(t, "restartingVersions")
		quarantine := rapid.Bool().Draw(t, "quarantine")
		// Zero drift half the time, so that time lands exactly on expiry instants.
		drift := rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(-500_000, 500_000)).Draw(t, "node drift ppm")
		w := storeWorld(t, restarting, quarantine, drift)
		m := &storeModel{entries: map[string]modelEntry{}, leases: map[uint64]modelLease{}, restarting: restarting, up: true,
			quarantine: quarantine, restartAt: -1, ttl: int64(w.cfg.TTL)}
		var versions []uint64 // every version the node handed out, in order
		key := rapid.SampledFrom([]string{"k", "j", "m/1", "m/2", "m/3"})
		prefix := rapid.SampledFrom([]string{"m/", "k", ""})
		leaseID := func(t *rapid.T) uint64 { return rapid.Uint64Range(0, m.lastLease+1).Draw(t, "lease") }
		owner := rapid.SampledFrom([]string{"h0", "h1"})
		ms := func(t *rapid.T, label string) int64 {
			return int64(rapid.IntRange(0, 40).Draw(t, label)) * int64(time.Millisecond)
		}
		check := func(t *rapid.T, r request) {
			nodeNow := w.nodes[0].clock.local(w.now)
			want := m.apply(r, w.now, int64(nodeNow))
			got := w.stepNode(r)
			if got != want {
				t.Fatalf("%s %s at node time %d: got %+v, want %+v", r.op, r.key, nodeNow, got, want)
			}
			if got.err == errNone && got.item.Version != 0 && r.op != opRead && r.op != opFirstCreated && r.op != opLastCreatedBefore {
				versions = append(versions, got.item.Version)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				check(t, request{op: opWriteIfAbsentOrSame, key: key.Draw(t, "key"), owner: owner.Draw(t, "owner"), expiry: ms(t, "expiry")})
			},
			"read": func(t *rapid.T) {
				check(t, request{op: opRead, key: key.Draw(t, "key")})
			},
			"remove": func(t *rapid.T) {
				k := key.Draw(t, "key")
				v := rapid.Uint64Range(0, 6).Draw(t, "version")
				if e, ok := m.entries[k]; ok && rapid.Bool().Draw(t, "current version") {
					v = e.version
				}
				check(t, request{op: opRemove, key: k, version: v})
			},
			"setIfAbsentTTL": func(t *rapid.T) {
				check(t, request{op: opSetIfAbsentTTL, key: key.Draw(t, "key"), owner: owner.Draw(t, "owner"), ttl: int64(rapid.IntRange(1, 40).Draw(t, "ttl ms")) * int64(time.Millisecond)})
			},
			"compareAndDelete": func(t *rapid.T) {
				check(t, request{op: opCompareAndDelete, key: key.Draw(t, "key"), owner: owner.Draw(t, "owner")})
			},
			"increment": func(t *rapid.T) {
				check(t, request{op: opIncrement, key: key.Draw(t, "key")})
			},
			"raiseCounter": func(t *rapid.T) {
				check(t, request{op: opRaiseCounter, key: key.Draw(t, "key"), num: rapid.Uint64Range(0, 8).Draw(t, "at least")})
			},
			"extendIfOwner": func(t *rapid.T) {
				check(t, request{op: opExtendIfOwner, key: key.Draw(t, "key"), owner: owner.Draw(t, "owner"), ttl: int64(rapid.IntRange(1, 40).Draw(t, "ttl ms")) * int64(time.Millisecond)})
			},
			"leaseGrant": func(t *rapid.T) {
				check(t, request{op: opLeaseGrant, ttl: int64(rapid.IntRange(1, 40).Draw(t, "ttl ms")) * int64(time.Millisecond)})
			},
			"leaseKeepAlive": func(t *rapid.T) { check(t, request{op: opLeaseKeepAlive, num: leaseID(t)}) },
			"leaseRevoke":    func(t *rapid.T) { check(t, request{op: opLeaseRevoke, num: leaseID(t)}) },
			"createWithLease": func(t *rapid.T) {
				check(t, request{op: opCreateWithLease, key: key.Draw(t, "key"), owner: owner.Draw(t, "owner"), num: leaseID(t)})
			},
			"firstCreated": func(t *rapid.T) { check(t, request{op: opFirstCreated, key: prefix.Draw(t, "prefix")}) },
			"lastCreatedBefore": func(t *rapid.T) {
				check(t, request{op: opLastCreatedBefore, key: prefix.Draw(t, "prefix"), num: rapid.Uint64Range(0, m.revision+1).Draw(t, "rev")})
			},
			"delete": func(t *rapid.T) { check(t, request{op: opDelete, key: key.Draw(t, "key")}) },
			"time passes": func(t *rapid.T) {
				w.now += ms(t, "advance")
			},
			"crash": func(t *rapid.T) {
				if !m.up {
					t.Skip("already down")
				}
				wipe := rapid.Bool().Draw(t, "volatile")
				w.crashNode(wipe)
				m.up = false
			},
			"restart": func(t *rapid.T) {
				if m.up {
					t.Skip("not down")
				}
				if w.plan.Events[0].Wipe {
					// A volatile node forgets its data, leases and revision; the
					// version counter and lease IDs are a boot epoch and survive.
					clear(m.entries)
					clear(m.leases)
					m.revision = 0
				}
				w.endFault(0)
				m.up, m.restartAt = true, w.now
			},
		})
		if !restarting {
			for i := 1; i < len(versions); i++ {
				if versions[i] <= versions[i-1] {
					t.Fatalf("version %d handed out after %d: versions must never repeat within a node", versions[i], versions[i-1])
				}
			}
		}
	})
}

// With restarting versions a key re-created after removal gets version 1
// again: the ABA the option exists for. Without it, never.
func TestStoreRestartingVersionsRepeat(t *testing.T) {
	for _, restarting := range []bool{false, true} {
		s := newStore(restarting)
		w := &request{op: opWriteIfAbsentOrSame, key: "k", owner: "a"}
		first := s.applied(w, 0).item.Version
		s.applied(&request{op: opRemove, key: "k", version: first}, 0)
		second := s.applied(w, 0).item.Version
		s.wipe()
		third := s.applied(w, 0).item.Version
		repeated := first == second && second == third
		if repeated != restarting {
			t.Errorf("restartingVersions=%v: versions %d, %d, %d after remove and wipe", restarting, first, second, third)
		}
	}
}

// The node-side TTL is measured on the node's clock and ends exactly at
// set time + ttl: live one nanosecond before, gone at the instant.
func TestStoreTTLEndsAtDeadlineOnNodeClock(t *testing.T) {
	s := newStore(false)
	set := request{op: opSetIfAbsentTTL, key: "k", owner: "a", ttl: int64(time.Second)}
	if r := s.applied(&set, 1000); r.err != errNone {
		t.Fatalf("set: %v", r.err.err())
	}
	read := request{op: opRead, key: "k"}
	if r := s.applied(&read, 1000+reading(time.Second)-1); r.err != errNone {
		t.Fatalf("read 1ns before the deadline: %v, want the item", r.err.err())
	}
	if r := s.applied(&read, 1000+reading(time.Second)); r.err != errKeyNotFound {
		t.Fatalf("read at the deadline: %+v, want KeyNotFound", r)
	}
	if r := s.applied(&set, 1000+reading(time.Second)); r.err != errNone {
		t.Fatalf("set after expiry: %v, want a new item", r.err.err())
	}
}

// lookup is the entry under key, expired or not, for tests to inspect.
func (s *store) lookup(key string) (entry, bool) {
	if i := s.find(key); i >= 0 {
		return s.entries[i].entry, true
	}
	return entry{}, false
}

// get is lookup's entry alone (the zero entry if key is absent).
func (s *store) get(key string) entry {
	e, _ := s.lookup(key)
	return e
}

// applied is the reply of apply(r, now).
func (s *store) applied(r *request, now reading) reply {
	var rep reply
	s.apply(r, now, &rep)
	return rep
}
