package sim

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The queue pops events in (time, insertion order): equal times fire in the
// order they were scheduled, whatever the interleaving of pushes and pops.
func TestQueueOrderAgainstSortedModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q queue
		var model []event // kept sorted by (at, seq)
		var seq uint64
		t.Repeat(map[string]func(*rapid.T){
			"push": func(t *rapid.T) {
				at := rapid.Int64Range(0, 20).Draw(t, "at") // small range: many ties
				a := rapid.Int32Range(0, 1000).Draw(t, "a")
				q.push(at, evWake, a, uint64(a))
				seq++
				e := event{at: at, seq: seq, kind: evWake, a: a, b: uint64(a)}
				i, _ := slices.BinarySearchFunc(model, e, func(x, y event) int {
					if x.before(&y) {
						return -1
					}
					return 1
				})
				model = slices.Insert(model, i, e)
			},
			"pop": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip("empty")
				}
				got, want := *q.pop(), model[0]
				model = model[1:]
				if got != want {
					t.Fatalf("pop = %+v, want %+v", got, want)
				}
			},
			"": func(t *rapid.T) {
				if q.len() != len(model) {
					t.Fatalf("len = %d, want %d", q.len(), len(model))
				}
			},
		})
	})
}

func TestQueueTiesFireInScheduleOrder(t *testing.T) {
	var q queue
	for i := range int32(100) {
		q.push(5, evWake, i, 0)
	}
	q.push(4, evEnd, -1, 0)
	if e := q.pop(); e.kind != evEnd {
		t.Fatalf("earliest event should pop first, got %+v", e)
	}
	for i := range int32(100) {
		if e := q.pop(); e.a != i {
			t.Fatalf("tie %d popped as %d: ties must keep insertion order", i, e.a)
		}
	}
	if q.len() != 0 {
		t.Fatalf("queue should be empty, has %d", q.len())
	}
}

// Once grown, the queue allocates nothing per push and pop.
func TestQueueDoesNotAllocate(t *testing.T) {
	var q queue
	for i := range 64 {
		q.push(int64(i), evWake, 0, 0)
	}
	for q.len() > 0 {
		q.pop()
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			q.push(int64(64-i), evWake, 0, 0)
		}
		for q.len() > 0 {
			q.pop()
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 64 pushes and pops, want 0", allocs)
	}
}

// refHeap is the plain binary heap the two-level queue replaced, kept as the
// reference: the queue must pop exactly what it popped.
type refHeap struct {
	items []event
	seq   uint64
}

func (h *refHeap) push(at int64, kind evKind, a int32, b uint64) {
	h.seq++
	h.items = append(h.items, event{at: at, seq: h.seq, kind: kind, a: a, b: b})
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.items[i].before(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *refHeap) pop() event {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < last && h.items[l].before(&h.items[m]) {
			m = l
		}
		if r < last && h.items[r].before(&h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// The queue pops what a plain heap pops, event for event, under the
// shapes a run produces: messages a few ms ahead, timers and sleeps far
// ahead, piles of deliveries held to one instant by a clog, bursts that
// overflow near into far, ties at the boundary between the two, and long
// drains.
func TestQueueMatchesPlainHeap(t *testing.T) {
	r := newStream(7, 7)
	for round := range 200 {
		var q queue
		var ref refHeap
		now := int64(0)
		// Each round favours a different queue length, up to several times nearCap.
		target := 1 + int(r.uint64n(4*nearCap))
		for step := range 20_000 {
			var at int64
			switch r.uint64n(12) {
			case 0, 1, 2, 3, 4:
				at = now + between(&r, 1_000_000, 5_000_000) // a message
			case 5:
				at = now + between(&r, 100_000_000, 3_000_000_000) // a sleep
			case 6:
				at = now + 200_000_000 // a timeout: many equal offsets
			case 7:
				at = now + 30_000_000 - now%30_000_000 // a clog's end: many ties
			case 8:
				at = now // due at once
			case 9:
				at = q.near[0].at // a tie with the latest near event (or the first pushed into it)
			case 10:
				if len(q.items) > 0 {
					at = q.items[0].at // a tie with far's earliest
				}
			default:
				at = now + between(&r, 0, 3)
			}
			at = max(at, now) // a stale slot, or an empty far: nothing is scheduled in the past
			if q.len() < target || r.uint64n(2) == 0 {
				a := int32(step)
				q.push(at, evDeliver, a, uint64(round))
				ref.push(at, evDeliver, a, uint64(round))
			}
			for q.len() > target || (q.len() > 0 && r.uint64n(3) == 0) {
				got, want := *q.pop(), ref.pop()
				if got != want {
					t.Fatalf("round %d step %d: pop = %+v, want %+v", round, step, got, want)
				}
				now = got.at
			}
			if q.len() != len(ref.items) {
				t.Fatalf("round %d step %d: len = %d, want %d", round, step, q.len(), len(ref.items))
			}
		}
		for q.len() > 0 {
			if got, want := *q.pop(), ref.pop(); got != want {
				t.Fatalf("round %d drain: pop = %+v, want %+v", round, got, want)
			}
		}
	}
}
