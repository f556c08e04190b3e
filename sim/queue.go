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
	// Kinds added later go last: the trace hash mixes every event's kind,
	// so renumbering one would change every recorded run's hash.
	evView // client a learns of topology generation b
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

// nearCap is how many of the earliest events the queue keeps sorted. A run
// has a few messages in flight, 1-5 ms ahead, and timers and sleeps
// hundreds of ms ahead: the messages fit, and inserting one moves only the
// few events due before it.
//
// It must be a power of two: push masks indexes with nearCap-1.
const nearCap = 32

// A nearCap that is not a power of two fails to compile here.
var _ [-(nearCap & (nearCap - 1))]struct{}

// queue is the event queue, ordered by (at, seq), typed so that no
// interface boxing or allocation happens on push and pop. It has two
// levels: near, a short sorted array of the earliest events, and far, a
// binary min-heap of all later ones. Every near event is before every far
// one, so the earliest event is the last of near, or the root of far when
// near is empty.
//
// A pushed event goes to far if it is not before far's root (a timer or a
// sleep behind others), else into near at its place; a full near hands its
// latest event to far, where it becomes the root. Since seq grows with every
// push, a pushed event is after every queued event at the same time, so
// comparing times is enough to place it.
type queue struct {
	near  [nearCap]event // the earliest events, latest first: pop takes the last
	nNear int
	items []event // far: a binary min-heap on (at, seq)
	seq   uint64
	// popped holds an event popped from far, so that far can reuse its slot.
	popped event
}

func (q *queue) len() int { return q.nNear + len(q.items) }

func (q *queue) push(at int64, kind evKind, a int32, b uint64) {
	q.seq++
	if len(q.items) > 0 && at >= q.items[0].at {
		q.pushFar(at, q.seq, kind, a, b)
		return
	}
	j := q.nNear
	if j >= nearCap {
		// Full: the latest near event or the pushed one, whichever is later,
		// becomes far's earliest.
		l := &q.near[0]
		if at >= l.at {
			q.pushFar(at, q.seq, kind, a, b)
			return
		}
		q.pushFar(l.at, l.seq, l.kind, l.a, l.b)
		copy(q.near[:nearCap-1], q.near[1:])
		j = nearCap - 1
	}
	q.nNear = j + 1
	// Move the events due before the new one (or at its time: they were
	// scheduled earlier) one place towards the end. j is below nearCap, so
	// masking it changes nothing; it lets the compiler drop the bounds checks.
	for j > 0 {
		prev := &q.near[(j-1)&(nearCap-1)]
		if prev.at > at {
			break
		}
		q.near[j&(nearCap-1)] = *prev
		j--
	}
	e := &q.near[j&(nearCap-1)]
	e.at, e.seq, e.kind, e.a, e.b = at, q.seq, kind, a, b
}

// pop returns the earliest event. The queue must not be empty. The event
// stays valid only until the next push or pop. Popping from near is small
// enough to inline into the event loop; far has a function of its own.
func (q *queue) pop() *event {
	if q.nNear == 0 {
		return q.popFar()
	}
	q.nNear--
	return &q.near[q.nNear] // the slot is reused by the next push into near
}

// popFar pops far's root, when near is empty.
func (q *queue) popFar() *event {
	q.popped = q.items[0]
	last := len(q.items) - 1
	e := q.items[last]
	q.items = q.items[:last]
	if last > 0 {
		q.items[q.sink(e.at, e.seq)] = e
	}
	return &q.popped
}

// pushFar adds an event to far. The event is written once, where it
// belongs: the sift moves only the events around it and compares keys.
func (q *queue) pushFar(at int64, seq uint64, kind evKind, a int32, b uint64) {
	q.items = append(q.items, event{})
	e := &q.items[q.rise(len(q.items)-1, at, seq)]
	e.at, e.seq, e.kind, e.a, e.b = at, seq, kind, a, b
}

// sink moves the hole at far's root down to where an event keyed (at, seq)
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
