package model

import (
	"cmp"
	"slices"
)

// builder makes hand-written histories read like timelines: each call
// appends one event at a time in milliseconds, with the next Seq.
type builder struct{ h History }

func newBuilder(clients ...string) *builder {
	b := &builder{}
	for _, c := range clients {
		b.h.Clients = append(b.h.Clients, Client{Name: c, Host: c[:2]})
	}
	b.h.TTL = 60e9
	return b
}

func (b *builder) add(ms int64, c int, k Kind, edit func(*Event)) *builder {
	e := Event{Seq: uint64(len(b.h.Events) + 1), Time: ms * 1e6, Client: c, Kind: k}
	if edit != nil {
		edit(&e)
	}
	b.h.Events = append(b.h.Events, e)
	b.h.End = max(b.h.End, e.Time)
	return b
}

func (b *builder) call(ms int64, c int) *builder { return b.add(ms, c, AcquireCall, nil) }
func (b *builder) grant(ms int64, c int) *builder {
	return b.add(ms, c, AcquireReturn, func(e *Event) { e.Granted = true })
}
func (b *builder) deny(ms int64, c int) *builder { return b.add(ms, c, AcquireReturn, nil) }
func (b *builder) acquire(ms int64, c int) *builder {
	return b.call(ms, c).grant(ms, c)
}
func (b *builder) end(ms int64, c int, reason string) *builder {
	return b.add(ms, c, BeliefEnd, func(e *Event) { e.Reason = reason })
}
func (b *builder) release(ms int64, c int) *builder {
	return b.end(ms, c, "release").add(ms, c, ReleaseCall, nil).add(ms, c, ReleaseReturn, nil)
}
func (b *builder) stop(ms int64, c int) *builder { return b.add(ms, c, ClientStop, nil) }
func (b *builder) read(ms int64, c int, v int64, ok bool) *builder {
	return b.add(ms, c, ResourceRead, func(e *Event) { e.Value, e.Accepted = v, ok })
}
func (b *builder) write(ms int64, c int, v int64, ok bool) *builder {
	return b.add(ms, c, ResourceWrite, func(e *Event) { e.Value, e.Accepted = v, ok })
}
func (b *builder) endAt(ms int64) *builder { b.h.End = ms * 1e6; return b }

// resequenceByTime orders events by time (stable) and renumbers Seq.
func resequenceByTime(h History) History {
	events := append([]Event(nil), h.Events...)
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.Time, b.Time) })
	for i := range events {
		events[i].Seq = uint64(i + 1)
	}
	h.Events = events
	return h
}
