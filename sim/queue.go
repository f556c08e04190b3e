package sim

// evKind is what a scheduled event does when it fires.
type evKind uint8

const (
	evStart    evKind = iota + 1 // a client process starts running
	evDeliver                    // message a arrives at its destination
	evTimeout                    // client a's timeout timer (see process.timerAt)
	evWake                       // client a's sleep b ended
	evResume                     // client a's pause ended: resume what it was waiting for
	evValidity                   // client a's hold b reached its validity deadline
	evFault                      // plan event a starts
	evFaultEnd                   // plan event a ends (restart, heal, unclog, unpause)
	evEnd                        // the run's virtual time is up
)

// event is one entry of the event queue. It is a value: the queue never
// allocates once its backing array has grown to the run's high-water mark.
type event struct {
	at   int64  // true time, ns
	seq  uint64 // insertion order: ties at equal time fire in the order scheduled
	kind evKind
	a    int32
	b    uint64
}

func (e *event) before(o *event) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

// queue is a binary min-heap of events ordered by (at, seq), typed so that
// no interface boxing or allocation happens on push and pop.
//
// Popping leaves the root's slot vacant until the next operation: most
// events schedule another (a delivery schedules its reply), and a push into
// the vacant root is one sift down from the top instead of a sift down to
// remove the old root plus a sift up to add the new event. The order of
// pops is the same either way: keys are unique, since seq is.
type queue struct {
	items  []event
	seq    uint64
	vacant bool // items[0] is the event last popped, not part of the queue
}

func (q *queue) len() int {
	if q.vacant {
		return len(q.items) - 1
	}
	return len(q.items)
}

func (q *queue) push(at int64, kind evKind, a int32, b uint64) {
	q.seq++
	var i int
	if q.vacant {
		q.vacant = false
		i = q.sink(at, q.seq)
	} else {
		q.items = append(q.items, event{})
		i = q.rise(len(q.items)-1, at, q.seq)
	}
	// The event is written once, where it belongs: the sifts move only the
	// events around it and compare keys.
	e := &q.items[i]
	e.at, e.seq, e.kind, e.a, e.b = at, q.seq, kind, a, b
}

// pop returns the earliest event and leaves its slot vacant. The queue must
// not be empty. The event stays valid only until the next push or pop.
func (q *queue) pop() *event {
	if q.vacant {
		// Fill the previous pop's slot with the last item.
		last := len(q.items) - 1
		e := q.items[last]
		q.items = q.items[:last]
		if last > 0 {
			q.items[q.sink(e.at, e.seq)] = e
		}
	}
	q.vacant = true
	return &q.items[0]
}

// sink moves the hole at the root down to where an event keyed (at, seq)
// belongs, moving the earlier child up into the hole at each level, and
// returns the hole's index.
func (q *queue) sink(at int64, seq uint64) int {
	items := q.items
	i, n := 0, len(items)
	for {
		l := 2*i + 1
		if l >= n {
			return i
		}
		m := l
		if r := l + 1; r < n && items[r].before(&items[l]) {
			m = r
		}
		if c := &items[m]; c.at > at || c.at == at && c.seq > seq {
			return i
		}
		items[i] = items[m]
		i = m
	}
}

// rise moves the hole at index i up to where an event keyed (at, seq)
// belongs, moving parents down into the hole, and returns the hole's index.
func (q *queue) rise(i int, at int64, seq uint64) int {
	items := q.items
	for i > 0 {
		parent := (i - 1) / 2
		if p := &items[parent]; p.at < at || p.at == at && p.seq < seq {
			return i
		}
		items[i] = items[parent]
		i = parent
	}
	return i
}
