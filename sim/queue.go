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
	e := event{at: at, seq: q.seq, kind: kind, a: a, b: b}
	if q.vacant {
		q.vacant = false
		q.siftDown(e)
		return
	}
	q.items = append(q.items, e)
	// Sift up, moving parents down into the hole instead of swapping.
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !e.before(&q.items[parent]) {
			break
		}
		q.items[i] = q.items[parent]
		i = parent
	}
	q.items[i] = e
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
			q.siftDown(e)
		}
	}
	q.vacant = true
	return &q.items[0]
}

// siftDown puts e into the vacant root and moves it down to its place,
// moving children up into the hole instead of swapping.
func (q *queue) siftDown(e event) {
	items := q.items
	i, n := 0, len(items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && items[r].before(&items[l]) {
			m = r
		}
		if !items[m].before(&e) {
			break
		}
		items[i] = items[m]
		i = m
	}
	items[i] = e
}
