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
type queue struct {
	items []event
	seq   uint64
}

func (q *queue) len() int { return len(q.items) }

func (q *queue) push(at int64, kind evKind, a int32, b uint64) {
	q.seq++
	e := event{at: at, seq: q.seq, kind: kind, a: a, b: b}
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

func (q *queue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	e := q.items[last]
	q.items = q.items[:last]
	// Sift the last item down from the root, moving children up into the hole.
	i, n := 0, last
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.items[r].before(&q.items[l]) {
			m = r
		}
		if !q.items[m].before(&e) {
			break
		}
		q.items[i] = q.items[m]
		i = m
	}
	if n > 0 {
		q.items[i] = e
	}
	return top
}
