package sim

import (
	"sync"

	"github.com/locksim/locksim/model"
)

// Buffers lets consecutive runs reuse their largest allocations: the
// history's events, the message slab and the event queue. Pass the same
// *Buffers in Scenario.Buffers to runs made one after another (never
// concurrently). The History.Events of a run made with Buffers belongs to
// them: it is valid only until the next run that uses the same Buffers.
// Reuse changes nothing a run does, only what it allocates.
type Buffers struct {
	events []model.Event
	scratch
}

// scratch is the memory no result refers to; runs without Buffers borrow it
// from a pool.
type scratch struct {
	msgs  []message
	free  []int32
	queue []event
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// takeBuffers gives the world its starting slices.
func (w *world) takeBuffers(b *Buffers) {
	var s *scratch
	if b != nil {
		s = &b.scratch
		w.hist.Events = b.events[:0]
	} else {
		s = scratchPool.Get().(*scratch)
	}
	w.msgs, w.freeMsgs, w.q.items = s.msgs[:0], s.free[:0], s.queue[:0]
}

// returnBuffers keeps the (possibly grown) slices for the next run.
func (w *world) returnBuffers(b *Buffers) {
	if b != nil {
		b.events = w.hist.Events
		b.msgs, b.free, b.queue = w.msgs, w.freeMsgs, w.q.items
		return
	}
	clear(w.msgs) // drop references to strings held by old messages
	scratchPool.Put(&scratch{msgs: w.msgs[:0], free: w.freeMsgs[:0], queue: w.q.items[:0]})
}
