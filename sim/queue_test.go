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
