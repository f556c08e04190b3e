package model

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// CounterOpKind says what a resource access did to the protected counter.
type CounterOpKind uint8

const (
	// Increment: an accepted read of Read, then the same client's accepted
	// write of Write (Read+1 in the workload), as one atomic operation.
	Increment CounterOpKind = iota + 1
	// ReadOnly: an accepted read whose write never took effect (fencing
	// rejected it, or the client stopped or moved on first). It still
	// observed Read, so the counter must have held Read at that instant.
	ReadOnly
	// BlindWrite: an accepted write with no accepted read before it: it sets
	// the counter whatever it held.
	BlindWrite
)

// CounterInput is the input of a counter operation in the porcupine model.
type CounterInput struct {
	Client int
	Kind   CounterOpKind
	Read   int64 // value observed (Increment, ReadOnly)
	Write  int64 // value written (Increment, BlindWrite)
}

// CounterOpMeta is the metadata of a counter operation: true times of its
// first and last access.
type CounterOpMeta struct{ StartTime, EndTime int64 }

// counterState is the protected counter as the model knows it. The model does
// not assume the register's initial value: the first operation fixes it, so
// only the accesses' consistency with one another is judged.
type counterState struct {
	Known bool
	Value int64
}

// CounterOperations turns the history's resource accesses into porcupine
// operations against an atomic counter.
//
// Accesses are instants of a reliable register, so none has an unknown
// outcome; what can be missing is the second half of a read-modify-write.
// Per client, an accepted read pairs with that client's next write:
//
//   - accepted write: an Increment [read.Seq, write.Seq], legal iff the
//     counter holds Read, leaving Write;
//   - rejected write (fencing): the increment did not happen, so only the
//     read remains, a ReadOnly [read.Seq, read.Seq];
//   - no write before the client's next read or the end of the events
//     (it stopped, or its belief ended and it moved on): ReadOnly.
//
// A rejected read observed nothing and is dropped; an accepted write with no
// accepted read before it is a BlindWrite [write.Seq, write.Seq].
func CounterOperations(h History) (porcupine.Model, []porcupine.Operation) {
	return counterModel(h), porcupineCounterOps(nil, counterOpsInto(nil, h))
}

// counterOp is one of CounterOperations' operations before porcupine's
// boxing: the checks that need no porcupine read these.
type counterOp struct {
	in        CounterInput
	call, ret int64 // porcupine's Call and Return: Seqs of the first and last access
	meta      CounterOpMeta
}

// counterOpsInto is CounterOperations' operations in buf's memory.
func counterOpsInto(buf []counterOp, h History) []counterOp {
	events := eventsInOrder(h)
	accesses := 0
	for i := range events {
		if k := events[i].Kind; k == ResourceRead || k == ResourceWrite {
			accesses++
		}
	}
	ops := slices.Grow(buf[:0], accesses) // at most one op per access
	add := func(in CounterInput, first, last *Event) {
		ops = append(ops, counterOp{in: in, call: int64(first.Seq), ret: int64(last.Seq),
			meta: CounterOpMeta{first.Time, last.Time}})
	}
	readOnly := func(r *Event) { add(CounterInput{Client: r.Client, Kind: ReadOnly, Read: r.Value}, r, r) }
	pending := map[int]*Event{} // client -> its accepted read awaiting a write
	for i := range events {
		e := &events[i] // by pointer: an Event is over 100 bytes
		switch e.Kind {
		case ResourceRead:
			if r, ok := pending[e.Client]; ok {
				readOnly(r)
				delete(pending, e.Client)
			}
			if e.Accepted {
				pending[e.Client] = e
			}
		case ResourceWrite:
			r, ok := pending[e.Client]
			delete(pending, e.Client)
			switch {
			case e.Accepted && ok:
				add(CounterInput{Client: e.Client, Kind: Increment, Read: r.Value, Write: e.Value}, r, e)
			case e.Accepted:
				add(CounterInput{Client: e.Client, Kind: BlindWrite, Write: e.Value}, e, e)
			case ok:
				readOnly(r)
			}
		}
	}
	// Reads never followed by a write, in event order (not map order).
	var rest []*Event
	for _, r := range pending {
		rest = append(rest, r)
	}
	slices.SortFunc(rest, func(a, b *Event) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, r := range rest {
		readOnly(r)
	}
	slices.SortStableFunc(ops, func(a, b counterOp) int { return cmp.Compare(a.call, b.call) })
	return ops
}

// porcupineCounterOps boxes ops as porcupine operations, in buf's memory.
func porcupineCounterOps(buf []porcupine.Operation, ops []counterOp) []porcupine.Operation {
	out := slices.Grow(buf[:0], len(ops))
	for _, op := range ops {
		out = append(out, porcupine.Operation{
			ClientId: op.in.Client, Input: op.in, Call: op.call, Return: op.ret, Metadata: op.meta,
		})
	}
	return out
}

func counterModel(h History) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return counterState{} },
		Step: func(state, input, _ any) (bool, any) {
			return counterStep(state.(counterState), input.(CounterInput))
		},
		Hash: func(state any) uint64 { return uint64(state.(counterState).Value) },
		DescribeOperation: func(input, _ any) string {
			in := input.(CounterInput)
			name := clientName(h, in.Client)
			switch in.Kind {
			case Increment:
				return fmt.Sprintf("%s read %d, wrote %d", name, in.Read, in.Write)
			case ReadOnly:
				return fmt.Sprintf("%s read %d", name, in.Read)
			default:
				return fmt.Sprintf("%s wrote %d", name, in.Write)
			}
		},
		DescribeState: func(state any) string {
			if s := state.(counterState); s.Known {
				return fmt.Sprint(s.Value)
			}
			return "unknown"
		},
		DescribeOperationMetadata: func(meta any) string {
			if meta == nil {
				return ""
			}
			m := meta.(CounterOpMeta)
			return "t=" + Seconds(m.StartTime) + ".." + Seconds(m.EndTime)
		},
	}
}

func counterStep(s counterState, in CounterInput) (bool, any) {
	switch in.Kind {
	case BlindWrite:
		return true, counterState{true, in.Write}
	case ReadOnly:
		return !s.Known || s.Value == in.Read, counterState{true, in.Read}
	default:
		return !s.Known || s.Value == in.Read, counterState{true, in.Write}
	}
}
