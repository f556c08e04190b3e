package sim

import (
	"runtime"
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
	// carriers are the coroutines of earlier runs' clients, waiting for
	// the next run's. A Buffers no longer reachable stops them (carriers'
	// cleanup), so a dropped one leaves no goroutine behind.
	carriers *carriers
}

type carriers struct{ list []*carrier }

// stopAll ends every carrier's coroutine.
func (cs *carriers) stopAll() {
	for _, c := range cs.list {
		c.stop()
	}
	cs.list = nil
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
		if b.carriers == nil {
			b.carriers = &carriers{}
			runtime.AddCleanup(b, func(cs *carriers) { cs.stopAll() }, b.carriers)
		}
		w.carriers, b.carriers.list = b.carriers.list, nil
	} else {
		s = scratchPool.Get().(*scratch)
	}
	w.msgs, w.freeMsgs, w.q.items = s.msgs[:0], s.free[:0], s.queue[:0]
}

// returnBuffers keeps the (possibly grown) slices for the next run.
func (w *world) returnBuffers(b *Buffers) {
	// Every client was killed (finish): its carrier waits for the next
	// process, or, without Buffers to keep it, ends.
	if b != nil {
		list := w.carriers[:0:0]
		for _, p := range w.clients {
			p.c.p = nil
			list = append(list, p.c)
		}
		b.carriers.list = append(w.carriers, list...)
		b.events = w.hist.Events
		b.msgs, b.free, b.queue = w.msgs, w.freeMsgs, w.q.items
		return
	}
	for _, p := range w.clients {
		p.c.stop()
	}
	clear(w.msgs) // drop references to strings held by old messages
	scratchPool.Put(&scratch{msgs: w.msgs[:0], free: w.freeMsgs[:0], queue: w.q.items[:0]})
}
