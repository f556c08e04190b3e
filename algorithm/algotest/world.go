// Package algotest is a tiny deterministic stand-in for the simulator, for
// testing lock algorithms without package sim: in-memory nodes, one settable
// true clock, per-host clock offsets, per-node failure injection and a log of
// every server call. Like net/http/httptest, it is only for tests.
//
// Every call runs to completion at once; a call advances the true clock by
// World.CallCost so that an acquire takes measurable time.
package algotest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
)

// World holds the nodes, the true clock and the call log.
type World struct {
	Clock    time.Duration // true time; nodes' TTLs run on it
	CallCost time.Duration // true time each server call takes
	Nodes    []*Node
	Log      []string // one line per server call, in order
	// BeforeCall, when set, runs before every server call is applied (to
	// script a concurrent change at an exact point).
	BeforeCall func(n *Node, what string)
}

// NewWorld makes a world of n healthy, empty nodes named n1..nN.
func NewWorld(n int) *World {
	w := &World{}
	for i := range n {
		w.Nodes = append(w.Nodes, &Node{
			w: w, name: fmt.Sprintf("n%d", i+1),
			items: map[string]stored{}, counters: map[string]uint64{},
			leases: map[uint64][2]time.Duration{}, leaseKeys: map[string]uint64{},
		})
	}
	return w
}

// Node is one in-memory DHT node.
type Node struct {
	w        *World
	name     string
	items    map[string]stored
	counters map[string]uint64
	version  uint64
	// The etcd-style state: store revision, leases (ID to true-time
	// deadline and TTL), the keys attached to each, the last lease ID.
	revision  uint64
	leases    map[uint64][2]time.Duration
	leaseKeys map[string]uint64
	lastLease uint64

	// Down makes every call fail with ErrServerDown without being applied.
	Down bool
	// LoseReplies makes the next LoseReplies calls be applied but report
	// ErrServerDown (the reply was lost).
	LoseReplies int
}

type stored struct {
	item     algorithm.Item
	deadline time.Duration // true-time end of a node-side TTL; 0: none
}

// Put stores an item directly (test setup), with a fresh version.
func (n *Node) Put(key, owner string, expiry time.Duration) {
	n.version++
	n.items[key] = stored{item: algorithm.Item{Key: key, Owner: owner, Expiry: expiry, Version: n.version}}
}

// Item returns the live item under key, if any.
func (n *Node) Item(key string) (algorithm.Item, bool) {
	s, ok := n.live(key)
	return s.item, ok
}

// Counter returns the counter under key.
func (n *Node) Counter(key string) uint64 { return n.counters[key] }

// Restart forgets everything, as a volatile node does.
func (n *Node) Restart() {
	n.items = map[string]stored{}
	n.counters = map[string]uint64{}
	n.leases, n.leaseKeys, n.revision = map[uint64][2]time.Duration{}, map[string]uint64{}, 0
}

func (n *Node) live(key string) (stored, bool) {
	s, ok := n.items[key]
	if ok && s.deadline != 0 && n.w.Clock >= s.deadline {
		delete(n.items, key) // a node-side TTL ran out: the node forgets it
		return stored{}, false
	}
	return s, ok
}

// call logs the call, advances the clock, and applies op unless the node is
// down; a lost reply turns op's result into ErrServerDown.
func (n *Node) call(what string, op func() error) error {
	n.w.Log = append(n.w.Log, n.name+" "+what)
	n.w.Clock += n.w.CallCost
	if n.w.BeforeCall != nil {
		n.w.BeforeCall(n, what)
	}
	if n.Down {
		return algorithm.ErrServerDown
	}
	err := op()
	if n.LoseReplies > 0 {
		n.LoseReplies--
		return algorithm.ErrServerDown
	}
	return err
}

func (n *Node) Name() string { return n.name }

func (n *Node) WriteIfDoesNotExistsOrSameServer(key, owner string, expiry time.Duration) error {
	return n.call(fmt.Sprintf("write %s %s %v", key, owner, expiry), func() error {
		if s, ok := n.live(key); ok && s.item.Owner != owner {
			return algorithm.ErrKeyAlreadyExists
		}
		n.Put(key, owner, expiry)
		return nil
	})
}

func (n *Node) ReadKey(key string) (algorithm.Item, error) {
	var item algorithm.Item
	err := n.call("read "+key, func() error {
		s, ok := n.live(key)
		if !ok {
			return algorithm.ErrKeyNotFound
		}
		item = s.item
		return nil
	})
	return item, err
}

func (n *Node) RemoveKey(key string, version uint64) error {
	return n.call(fmt.Sprintf("remove %s v%d", key, version), func() error {
		if s, ok := n.live(key); !ok || s.item.Version != version {
			return algorithm.ErrKeyVersionChanged
		}
		delete(n.items, key)
		return nil
	})
}

func (n *Node) SetIfAbsentTTL(key, owner string, ttl time.Duration) (algorithm.Item, error) {
	var item algorithm.Item
	err := n.call(fmt.Sprintf("setnx %s %s %v", key, owner, ttl), func() error {
		if _, ok := n.live(key); ok {
			return algorithm.ErrKeyAlreadyExists
		}
		n.version++
		item = algorithm.Item{Key: key, Owner: owner, Version: n.version}
		n.items[key] = stored{item: item, deadline: n.w.Clock + ttl}
		return nil
	})
	return item, err
}

func (n *Node) CompareAndDelete(key, owner string) error {
	return n.call(fmt.Sprintf("cad %s %s", key, owner), func() error {
		if s, ok := n.live(key); !ok || s.item.Owner != owner {
			return algorithm.ErrNotOwner
		}
		delete(n.items, key)
		return nil
	})
}

func (n *Node) Increment(key string) (uint64, error) {
	var v uint64
	err := n.call("incr "+key, func() error {
		n.counters[key]++
		v = n.counters[key]
		return nil
	})
	return v, err
}

func (n *Node) RaiseCounter(key string, atLeast uint64) (uint64, error) {
	var v uint64
	err := n.call(fmt.Sprintf("raise %s %d", key, atLeast), func() error {
		n.counters[key] = max(n.counters[key], atLeast)
		v = n.counters[key]
		return nil
	})
	return v, err
}

func (n *Node) ExtendIfOwner(key, owner string, ttl time.Duration) error {
	return n.call(fmt.Sprintf("extend %s %s %v", key, owner, ttl), func() error {
		s, ok := n.live(key)
		if !ok || s.item.Owner != owner {
			return algorithm.ErrNotOwner
		}
		s.deadline = n.w.Clock + ttl
		n.items[key] = s
		return nil
	})
}

// expireLeases ends the leases past their deadline, with their keys.
// Map order does not matter: every expired lease ends.
func (n *Node) expireLeases() {
	for id, l := range n.leases {
		if n.w.Clock >= l[0] {
			n.endLease(id)
		}
	}
}

func (n *Node) endLease(id uint64) {
	for key, l := range n.leaseKeys {
		if l == id {
			delete(n.leaseKeys, key)
			delete(n.items, key)
			n.revision++
		}
	}
	delete(n.leases, id)
}

func (n *Node) LeaseGrant(ttl time.Duration) (uint64, error) {
	var id uint64
	err := n.call(fmt.Sprintf("lease-grant %v", ttl), func() error {
		n.expireLeases()
		n.lastLease++
		id = n.lastLease
		n.leases[id] = [2]time.Duration{n.w.Clock + ttl, ttl}
		return nil
	})
	return id, err
}

func (n *Node) LeaseKeepAlive(lease uint64) error {
	return n.call(fmt.Sprintf("keep-alive %d", lease), func() error {
		n.expireLeases()
		l, ok := n.leases[lease]
		if !ok {
			return algorithm.ErrLeaseNotFound
		}
		n.leases[lease] = [2]time.Duration{n.w.Clock + l[1], l[1]}
		return nil
	})
}

func (n *Node) LeaseRevoke(lease uint64) error {
	return n.call(fmt.Sprintf("revoke %d", lease), func() error {
		n.expireLeases()
		if _, ok := n.leases[lease]; !ok {
			return algorithm.ErrLeaseNotFound
		}
		n.endLease(lease)
		return nil
	})
}

func (n *Node) CreateWithLease(key, owner string, lease uint64) (algorithm.Item, error) {
	var it algorithm.Item
	err := n.call(fmt.Sprintf("create %s %s lease %d", key, owner, lease), func() error {
		n.expireLeases()
		if s, ok := n.live(key); ok {
			it = s.item
			return algorithm.ErrKeyAlreadyExists
		}
		if _, ok := n.leases[lease]; !ok {
			return algorithm.ErrLeaseNotFound
		}
		n.revision++
		n.version++
		it = algorithm.Item{Key: key, Owner: owner, Version: n.version, CreateRevision: n.revision}
		n.items[key] = stored{item: it}
		n.leaseKeys[key] = lease
		return nil
	})
	return it, err
}

// byCreate is the live etcd-style key under prefix with the lowest (first)
// or else the highest create revision below before.
func (n *Node) byCreate(what, prefix string, first bool, before uint64) (algorithm.Item, error) {
	var it algorithm.Item
	err := n.call(what, func() error {
		n.expireLeases()
		found := false
		for _, s := range n.items {
			c := s.item.CreateRevision
			if c == 0 || !strings.HasPrefix(s.item.Key, prefix) || (!first && c >= before) {
				continue
			}
			if !found || (first == (c < it.CreateRevision)) {
				it, found = s.item, true
			}
		}
		if !found {
			return algorithm.ErrKeyNotFound
		}
		return nil
	})
	return it, err
}

func (n *Node) FirstCreated(prefix string) (algorithm.Item, error) {
	return n.byCreate("first-created "+prefix, prefix, true, 0)
}

func (n *Node) LastCreatedBefore(prefix string, rev uint64) (algorithm.Item, error) {
	return n.byCreate(fmt.Sprintf("last-created %s before %d", prefix, rev), prefix, false, rev)
}

func (n *Node) Delete(key string) error {
	return n.call("delete "+key, func() error {
		n.expireLeases()
		if _, ok := n.items[key]; ok {
			delete(n.items, key)
			delete(n.leaseKeys, key)
			n.revision++
		}
		return nil
	})
}

// Env is one client thread's view of a World.
type Env struct {
	W      *World
	Host   string
	Client string
	Offset time.Duration // local clock = true clock + Offset
	Slept  []time.Duration
	rng    *rand.Rand
}

// NewEnv makes a client thread on host with a seeded random stream.
func (w *World) NewEnv(host, client string, seed uint64) *Env {
	return &Env{W: w, Host: host, Client: client, rng: rand.New(rand.NewPCG(seed, 0))}
}

// Topology is every node of the world, in order, for any key.
func (e *Env) Topology(string) []algorithm.Server {
	servers := make([]algorithm.Server, len(e.W.Nodes))
	for i, n := range e.W.Nodes {
		servers[i] = n
	}
	return servers
}

func (e *Env) Now() time.Duration { return e.W.Clock + e.Offset }

// LocalNow is Now: algotest hosts are on UTC.
func (e *Env) LocalNow() time.Duration { return e.Now() }
func (e *Env) HostName() string        { return e.Host }
func (e *Env) ClientName() string      { return e.Client }
func (e *Env) Rand() *rand.Rand        { return e.rng }

// TTL is the post's one minute: the fake world has no other deployment.
func (e *Env) TTL() time.Duration { return algorithm.OriginalTTL }

// Sleep advances the true clock and records the sleep.
func (e *Env) Sleep(d time.Duration) {
	e.Slept = append(e.Slept, d)
	e.W.Clock += d
}

var (
	_ algorithm.Server = (*Node)(nil)
	_ algorithm.Env    = (*Env)(nil)
)
