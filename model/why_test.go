package model

import (
	"strings"
	"testing"
)

// item is a lock item's stay on node from..to (ms), written by client.
func item(node, owner string, client int, from, to int64) ItemLife {
	return ItemLife{Node: node, Owner: owner, Key: "k_lock", Client: client, From: from * 1e6, To: to * 1e6}
}

// explainStarved checks b's history for liveness and explains the wait.
func explainStarved(t *testing.T, b *builder) WaitWhy {
	t.Helper()
	v, found := CheckLiveness(b.h, DefaultCheckOptions().LivenessBound(b.h))
	if !found {
		t.Fatal("no liveness violation to explain")
	}
	why, ok := ExplainWait(b.h, v)
	if !ok {
		t.Fatal("ExplainWait explained nothing")
	}
	return why
}

// A failed attempt's item, never cleared, blocks every later attempt: the
// explanation names it, where it stood, and how it got there.
func TestExplainWaitNamesTheItemLeftBehind(t *testing.T) {
	b := starved()
	b.h.Replicas = 1
	b.call(10500, 0).deny(10600, 0) // h0's attempt writes n0's item and fails
	b.h.Items = []ItemLife{item("n0", "h0", 0, 0, 10000), item("n0", "h0", 0, 10550, 300000)}
	why := explainStarved(t, resequence(b))
	// h0's own attempt met only its own vote; every one of h1's met h0's item.
	if why.Failed < 2 || why.Blocked != why.Failed-1 || why.Clear != 1 {
		t.Fatalf("want every failed attempt of h1 blocked, got %+v", why)
	}
	if len(why.Blockers) != 1 || why.Blockers[0].Mechanism != "left by failed attempts that did not clear them" ||
		why.Blockers[0].Items != 1 || strings.Join(why.Blockers[0].Nodes, ",") != "n0" {
		t.Fatalf("want one item left by h0's failed attempt on n0, got %+v", why.Blockers)
	}
	if s := why.String(); !strings.Contains(s, "h0/t0's attempt that failed at 10.600s") {
		t.Fatalf("the explanation does not say how the item got there: %s", s)
	}
}

// A write that applies after its attempt gave up is named so.
func TestExplainWaitNamesALateWrite(t *testing.T) {
	b := starved()
	b.h.Replicas = 1
	b.call(10500, 0).deny(10600, 0)
	b.h.Items = []ItemLife{item("n0", "h0", 0, 10700, 300000)}
	why := explainStarved(t, resequence(b))
	if len(why.Blockers) != 1 || !strings.Contains(why.Blockers[0].Mechanism, "timed out but applied") {
		t.Fatalf("want the late write named, got %+v", why.Blockers)
	}
}

// With no item in the way, the attempts failed by their own calls; and a
// waiter that sleeps longer than a TTL between attempts is named.
func TestExplainWaitWithNothingInTheWay(t *testing.T) {
	b := newBuilder("h0/t0", "h1/t0").acquire(0, 0).release(10000, 0)
	b.h.TTL = 10e9
	for ms := int64(11000); ms < 300000; ms += 25000 {
		b.call(ms, 1).deny(ms+10, 1)
	}
	b.endAt(300000)
	b.h.Items = []ItemLife{item("n0", "h0", 0, 0, 10000)}
	why := explainStarved(t, b)
	if why.Failed == 0 || why.Clear != why.Failed || len(why.Blockers) != 0 {
		t.Fatalf("want every attempt failed with nothing in the way, got %+v", why)
	}
	if why.Sleeper != 1 || why.Slept < 24e9 || !strings.Contains(why.String(), "past the TTL") {
		t.Fatalf("want h1/t0's sleeps past the TTL named, got %+v: %s", why, why)
	}
}

// Two waiters whose attempts overlap, each with an item on one of three
// nodes, split the votes.
func TestExplainWaitNamesSplitVotes(t *testing.T) {
	b := newBuilder("h0/t0", "h1/t0", "h2/t0").acquire(0, 0).release(10000, 0)
	b.h.Replicas = 3
	for ms := int64(11000); ms < 300000; ms += 1000 {
		b.call(ms, 1).call(ms+1, 2).deny(ms+10, 1).deny(ms+11, 2)
		b.h.Items = append(b.h.Items, item("n0", "h1", 1, ms+2, ms+9), item("n1", "h2", 2, ms+3, ms+10))
	}
	b.endAt(300000)
	why := explainStarved(t, b)
	if why.Failed == 0 || why.Split != why.Failed {
		t.Fatalf("want every attempt lost to split votes, got %+v", why)
	}
}

// The application's data under the lock's name blocks like an item of
// nobody's, and is named as the application's.
func TestExplainWaitNamesTheApplicationsData(t *testing.T) {
	b := starved()
	b.h.Replicas = 1
	b.h.Items = []ItemLife{item("n0", "h0", 0, 0, 10000), {Node: "n0", Key: "k_lock", App: true, Client: -1, To: 300000e6}}
	why := explainStarved(t, b)
	if len(why.Blockers) != 1 || why.Blockers[0].Mechanism != "the application's data under k_lock" {
		t.Fatalf("want the application's data named, got %+v", why.Blockers)
	}
	b.h.Items[1].Key = "k" // data under another name blocks nothing
	if why := explainStarved(t, b); len(why.Blockers) != 0 {
		t.Fatalf("data under k is no lock item, got %+v", why.Blockers)
	}
}

func resequence(b *builder) *builder {
	b.h = resequenceByTime(b.h)
	return b
}
