package model

import (
	"math"
	"slices"
)

// Outcome is how an acquire attempt ended, as its client learned it.
type Outcome uint8

const (
	// Denied: Acquire returned Granted=false.
	Denied Outcome = iota + 1
	// Granted: Acquire returned Granted=true.
	Granted
	// Unknown: the client stopped (or the run ended) before Acquire
	// returned; the lock may or may not have been taken on its behalf.
	Unknown
)

var outcomeNames = [...]string{"?", "denied", "granted", "unknown"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "?"
}

// NoReturn is the ReturnSeq of an attempt that never returned: it returns
// "at infinity", after every recorded event.
const NoReturn = math.MaxUint64

// Attempt is one Acquire call and how it ended.
type Attempt struct {
	Client    int
	CallSeq   uint64
	CallTime  int64
	ReturnSeq uint64 // NoReturn when Outcome is Unknown
	// ReturnTime is the return's true time; for an Unknown attempt, the
	// time its client stopped (or History.End): the attempt was in flight
	// until then, which is what liveness needs.
	ReturnTime int64
	Outcome    Outcome
}

// Attempts lists every acquire attempt of the history in the order the
// attempts were called. An AcquireReturn without a call counts as an attempt
// called and returned at the same instant; a second AcquireCall while one is
// in flight, a ClientStop, or the end of the events makes the open attempt
// Unknown.
func Attempts(h History) []Attempt { return attemptsInto(nil, h) }

// attemptsInto is Attempts reusing buf's memory.
func attemptsInto(buf []Attempt, h History) []Attempt {
	events := eventsInOrder(h)
	calls := 0
	for i := range events {
		if events[i].Kind == AcquireCall {
			calls++
		}
	}
	out := slices.Grow(buf[:0], calls) // one per call, rarely a return without one
	open := map[int]int{}              // client -> index in out of its in-flight attempt
	unknown := func(c int, at int64) {
		if i, ok := open[c]; ok {
			out[i].ReturnSeq, out[i].ReturnTime, out[i].Outcome = NoReturn, at, Unknown
			delete(open, c)
		}
	}
	for i := range events {
		e := &events[i] // by pointer: an Event is over 100 bytes
		switch e.Kind {
		case AcquireCall:
			unknown(e.Client, e.Time)
			open[e.Client] = len(out)
			out = append(out, Attempt{Client: e.Client, CallSeq: e.Seq, CallTime: e.Time})
		case AcquireReturn:
			i, ok := open[e.Client]
			if !ok {
				i = len(out)
				out = append(out, Attempt{Client: e.Client, CallSeq: e.Seq, CallTime: e.Time})
			}
			delete(open, e.Client)
			out[i].ReturnSeq, out[i].ReturnTime, out[i].Outcome = e.Seq, e.Time, Denied
			if e.Granted {
				out[i].Outcome = Granted
			}
		case ClientStop:
			unknown(e.Client, e.Time)
		}
	}
	// Attempts still open when the events end: index order keeps this
	// deterministic (map iteration order must not leak into the result).
	for i := range out {
		if out[i].Outcome == 0 {
			out[i].ReturnSeq, out[i].ReturnTime, out[i].Outcome = NoReturn, h.End, Unknown
		}
	}
	return out
}
