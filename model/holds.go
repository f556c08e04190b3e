package model

import (
	"cmp"
	"math"
	"slices"
)

// OpenEnd is the EndSeq of a hold that was still believed when the events
// ended: it ends "at infinity".
const OpenEnd = math.MaxUint64

// Hold is an interval during which one client believed it held the lock:
// from the AcquireReturn that granted it to the client's next BeliefEnd.
// Intervals are closed and ordered by Seq, so a hold ending at Seq 10 and
// another starting at Seq 11 do not overlap even when their times are equal.
type Hold struct {
	Client    int
	StartSeq  uint64
	StartTime int64
	EndSeq    uint64 // OpenEnd when Open
	EndTime   int64  // History.End when Open
	Open      bool
	// EndReason is the BeliefEnd's Reason ("release", "expired"), "stopped"
	// when the client stopped for good while holding, "" when Open.
	EndReason string
}

// ReasonStopped is the EndReason of a hold whose client stopped (crashed)
// while it believed it held the lock.
const ReasonStopped = "stopped"

// Holds derives every client's hold intervals from the history, ordered by
// StartSeq.
//
// A ClientStop ends its client's hold: a stopped client believes nothing and
// can no longer act on the lock or the resource, so counting its hold as
// lasting forever would turn every crash of a holder into a false
// mutual-exclusion finding once the lock item expires and another client
// takes it. A paused client, by contrast, records no ClientStop and keeps
// believing until its BeliefEnd, which is exactly the bug the checker hunts.
//
// A grant to a client that already holds (a re-entrant acquire) extends the
// hold it has; a BeliefEnd without a hold is ignored.
func Holds(h History) []Hold { return holdsInto(nil, h) }

// holdsInto is Holds reusing buf's memory.
func holdsInto(buf []Hold, h History) []Hold {
	events := eventsInOrder(h)
	grants := 0
	for i := range events {
		if events[i].Kind == AcquireReturn && events[i].Granted {
			grants++
		}
	}
	out := slices.Grow(buf[:0], grants) // at most one hold per grant
	open := map[int]int{}               // client -> index in out of its open hold
	end := func(c int, e *Event, reason string) {
		if i, ok := open[c]; ok {
			out[i].EndSeq, out[i].EndTime, out[i].EndReason, out[i].Open = e.Seq, e.Time, reason, false
			delete(open, c)
		}
	}
	for i := range events {
		e := &events[i] // by pointer: an Event is over 100 bytes
		switch {
		case e.Kind == AcquireReturn && e.Granted:
			if _, holding := open[e.Client]; !holding {
				open[e.Client] = len(out)
				// Open until a BeliefEnd or ClientStop closes it.
				out = append(out, Hold{Client: e.Client, StartSeq: e.Seq, StartTime: e.Time, Open: true})
			}
		case e.Kind == BeliefEnd:
			end(e.Client, e, e.Reason)
		case e.Kind == ClientStop:
			end(e.Client, e, ReasonStopped)
		}
	}
	for i := range out {
		if out[i].Open {
			out[i].EndSeq, out[i].EndTime = OpenEnd, max(h.End, out[i].StartTime)
		}
	}
	return out
}

// eventsInOrder returns the events ordered by Seq. The History contract says
// they already are; a sorted copy is made only when they are not, so a
// hand-made or merged history is still judged by event order.
func eventsInOrder(h History) []Event {
	// A loop over Seq, not slices.IsSortedFunc: that passes two whole
	// Events by value per comparison, and a check calls this four times
	// over every event of the run.
	ev := h.Events
	for i := 1; i < len(ev); i++ {
		if ev[i].Seq < ev[i-1].Seq {
			events := slices.Clone(ev)
			slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) })
			return events
		}
	}
	return ev
}
