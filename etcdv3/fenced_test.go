package etcdv3

import (
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/locksimtest"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/realredis"
)

// fencedLock is etcd's Mutex with the token read by token, checked by the
// resource (FencedMutexEnvelope).
func fencedLock(token Token) realredis.Lock {
	l := Lock("etcd-concurrency-mutex-fenced", func(c *Client) realredisLocker {
		return NewFencedMutexLocker(c, "/locksim-lock", token)
	})
	l.Envelope = FencedMutexEnvelope()
	return l
}

// The default check of etcd's Mutex with the key's create revision as
// its fencing token, checked by the resource: resource safety holds at
// every version, 3.4.3's included (internal/outoftree runs it there),
// although 3.4.3's lock gives two holders on these same seeds.
func TestFencedMutexCheck(t *testing.T) {
	Check(t, func(c *Client) locksimtest.Locker { return NewFencedMutexLocker(c, "/locksim-lock", KeyCreateRevision) },
		locksimtest.Name("etcd-concurrency-mutex-fenced"), locksimtest.Envelope(FencedMutexEnvelope()), locksimtest.Seeds(300))
}

// fencedSweep runs seeds 1..n of the default check's worlds (every fault
// class) with etcd's Mutex fenced by token, and counts the seeds whose
// lock gave two holders at once and those where the resource lost an
// update, with the first of each.
func fencedSweep(t *testing.T, token Token, n int) (twoHolders, lost int, firstTwo, firstLost uint64) {
	t.Helper()
	lock := fencedLock(token)
	target := explore.Target{Variant: lock.Variant(), Config: realredis.EtcdDefaultConfig(), Classes: []faults.Class{faults.ClassAll},
		Runner: realredis.Runner{T: t, Lock: lock}}
	_, err := explore.Sweep(target, explore.SweepOptions{From: 1, Count: n, KeepGoing: true, OnOutcome: func(o explore.Outcome) {
		seen := map[model.ViolationKind]bool{}
		for _, v := range o.Verdict.Violations {
			seen[v.Kind] = true
		}
		if seen[model.MutualExclusion] {
			if twoHolders++; firstTwo == 0 {
				firstTwo = o.Seed
			}
		}
		if seen[model.LostUpdate] {
			if lost++; firstLost == 0 {
				firstLost = o.Seed
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return
}

// The resource stays safe where the lock does not. 3.4.3's Mutex gives two
// holders on some of the first 300 seeds (a waiter's Lock returns after
// its lease ended); with the key's create revision checked, no seed loses
// an update, because the two holders' tokens differ and the resource lets
// in only the newer. (3.6's lock gives two holders only where a holder
// outlives its lease, which fencing covers the same way.)
//
// Mutex.Header().Revision is no such token on 3.4: two waiters whose
// leases ended are woken by the same delete and read the same header
// revision, so both get in and an update is lost. On 3.6 a Lock that
// returns holds a live key, and the header revision is as good.
func TestFencingHoldsWhereTheMutexDoesNot(t *testing.T) {
	if testing.Short() {
		t.Skip("600 seeds")
	}
	two, lost, firstTwo, firstLost := fencedSweep(t, KeyCreateRevision, 300)
	t.Logf("key create revision: %d of 300 seeds with two holders (first %d), %d with a lost update (first %d)", two, firstTwo, lost, firstLost)
	if lost > 0 {
		t.Fatalf("the fenced resource lost an update in %d seeds (first: seed %d)", lost, firstLost)
	}
	if !fixedMutex && two == 0 {
		t.Fatal("3.4's Mutex gave no two holders in 300 seeds: the demonstration shows nothing")
	}
	two, lost, firstTwo, firstLost = fencedSweep(t, HeaderRevision, 300)
	t.Logf("header revision: %d of 300 seeds with two holders (first %d), %d with a lost update (first %d)", two, firstTwo, lost, firstLost)
	switch {
	case fixedMutex && lost > 0:
		t.Fatalf("3.6's Mutex fenced by its header revision lost an update in %d seeds (first: seed %d)", lost, firstLost)
	case !fixedMutex && lost == 0:
		t.Fatal("3.4's Mutex fenced by its header revision lost no update in 300 seeds")
	case !fixedMutex && !sharedToken(t, firstLost):
		t.Fatalf("seed %d lost an update, but no two clients were granted the same header revision", firstLost)
	}
}

// sharedToken reports whether two clients were granted the lock with the
// same token in seed's run of the header-revision-fenced Mutex.
func sharedToken(t *testing.T, seed uint64) bool {
	t.Helper()
	lock := fencedLock(HeaderRevision)
	target := explore.Target{Variant: lock.Variant(), Config: realredis.EtcdDefaultConfig(), Classes: []faults.Class{faults.ClassAll},
		Runner: realredis.Runner{T: t, Lock: lock}}
	opt := explore.DefaultOptions()
	opt.Keep = true
	o, err := explore.RunSeed(target, seed, opt)
	if err != nil {
		t.Fatal(err)
	}
	holder := map[uint64]int{}
	for _, e := range o.History.Events {
		if e.Kind != model.AcquireReturn || !e.Granted {
			continue
		}
		if c, ok := holder[e.Token]; ok && c != e.Client {
			t.Logf("seed %d: %s and %s were both granted with header revision %d", seed, o.History.Clients[c].Name, o.History.Clients[e.Client].Name, e.Token)
			return true
		}
		holder[e.Token] = e.Client
	}
	return false
}

// TestFencedMutexSweep backs VARIANTS.md's figures for the fenced Mutex:
// -sweep N seeds with each token.
func TestFencedMutexSweep(t *testing.T) {
	if *sweepSeeds == 0 {
		t.Skip("-sweep N runs it")
	}
	for _, tk := range []struct {
		name  string
		token Token
	}{{"key create revision", KeyCreateRevision}, {"header revision", HeaderRevision}} {
		two, lost, firstTwo, firstLost := fencedSweep(t, tk.token, *sweepSeeds)
		t.Logf("%s: %d of %d seeds with two holders (first %d), %d with a lost update (first %d)", tk.name, two, *sweepSeeds, firstTwo, lost, firstLost)
	}
}
