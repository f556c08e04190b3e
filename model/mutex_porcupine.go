package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"
)

// MutexInput is the input of a mutex operation in the porcupine model.
type MutexInput struct {
	Client  int
	Release bool   // false: an Acquire; true: the instant the client's belief ended
	Reason  string // the belief's end reason, for releases
}

// MutexOpMeta is the metadata of a mutex operation: true times, for the
// visualisation (porcupine orders operations by Seq, which says nothing to a
// reader).
type MutexOpMeta struct{ CallTime, ReturnTime int64 }

func (m MutexOpMeta) String() string {
	if m.CallTime == m.ReturnTime {
		return "t=" + Seconds(m.CallTime)
	}
	return "t=" + Seconds(m.CallTime) + ".." + Seconds(m.ReturnTime)
}

// noHolder is the mutex state when nobody holds the lock; otherwise the state
// is the holding client's index.
const noHolder = -1

// MutexOperations turns the history into porcupine operations against a
// mutex model, for CheckOperationsVerbose and Visualize:
//
//   - every acquire attempt is an operation [AcquireCall.Seq, AcquireReturn.Seq]
//     with output Granted, Denied or Unknown; an Unknown attempt (its client
//     stopped first) returns at math.MaxInt64 and the model accepts either
//     outcome for it;
//   - every end of a hold (BeliefEnd, or the ClientStop of a holder, see
//     Holds) is a release operation at that instant, [Seq, Seq].
//
// Call and Return are sequence numbers, never bare times: porcupine reads
// intervals as closed, and equal times would make back-to-back holds look
// concurrent and hide real overlaps. A denied acquire is always legal; a
// granted one needs the lock free (or already the client's); a release needs
// the client to hold it. To check or visualise, use MutexCheckOperations: the
// same without denials, which porcupine would search exponentially.
func MutexOperations(h History) (porcupine.Model, []porcupine.Operation) {
	var ops []porcupine.Operation
	for i, a := range Attempts(h) {
		ret := int64(a.ReturnSeq)
		if a.Outcome == Unknown {
			// Distinct "infinite" returns keep porcupine's unstable sort of
			// entries independent of input order; none precedes any call.
			ret = math.MaxInt64 - int64(i)
		}
		ops = append(ops, porcupine.Operation{
			ClientId: a.Client, Input: MutexInput{Client: a.Client}, Output: a.Outcome,
			Call: int64(a.CallSeq), Return: ret,
			Metadata: MutexOpMeta{a.CallTime, a.ReturnTime},
		})
	}
	for _, hd := range Holds(h) {
		if hd.Open {
			continue // never released: the model keeps it held to the end
		}
		ops = append(ops, porcupine.Operation{
			ClientId: hd.Client, Input: MutexInput{Client: hd.Client, Release: true, Reason: hd.EndReason},
			Call: int64(hd.EndSeq), Return: int64(hd.EndSeq),
			Metadata: MutexOpMeta{hd.EndTime, hd.EndTime},
		})
	}
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	return mutexModel(h), ops
}

func mutexModel(h History) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{noHolder} },
		Step: func(state, input, output any) []any {
			return mutexStep(state.(int), input.(MutexInput), output)
		},
		Hash: func(state any) uint64 { return uint64(state.(int) + 1) },
		DescribeOperation: func(input, output any) string {
			in := input.(MutexInput)
			if in.Release {
				return fmt.Sprintf("%s belief ends (%s)", clientName(h, in.Client), in.Reason)
			}
			return fmt.Sprintf("%s acquire -> %v", clientName(h, in.Client), output)
		},
		DescribeState: func(state any) string {
			if state.(int) == noHolder {
				return "free"
			}
			return "held by " + clientName(h, state.(int))
		},
		DescribeOperationMetadata: func(meta any) string {
			if meta == nil {
				return ""
			}
			return meta.(MutexOpMeta).String()
		},
	}
	return nm.ToModel()
}

// mutexStep returns every state the mutex can be in after the operation, or
// none if the operation is illegal in holder.
func mutexStep(holder int, in MutexInput, output any) []any {
	if in.Release {
		if holder != in.Client {
			return nil
		}
		return []any{noHolder}
	}
	grant := []any{}
	if holder == noHolder || holder == in.Client {
		grant = []any{in.Client}
	}
	switch output.(Outcome) {
	case Granted:
		return grant
	case Unknown:
		return append(grant, holder)
	default: // Denied: a refusal never contradicts mutual exclusion
		return []any{holder}
	}
}

// CheckMutexPorcupine reports whether the history's acquires and belief ends
// linearize against a mutex. It runs porcupine without a timeout: a timeout
// is wall-clock time and would make the verdict depend on the machine.
//
// It checks MutexCheckOperations, without denied attempts.
func CheckMutexPorcupine(h History) (ok bool) {
	model, ops := MutexCheckOperations(h)
	return porcupine.CheckOperations(model, ops)
}

// MutexCheckOperations is MutexOperations without the denied attempts: what
// to hand porcupine to check (or to visualise) mutual exclusion. A denial is
// legal in every state and leaves the state as it was, so it fits anywhere
// in its interval and never changes the verdict; but each one in flight
// doubles the orders porcupine must rule out before it can call a history
// illegal. With 20 contending clients and one overlap, keeping them cost
// 16-23 s per check; with 50 it did not finish in minutes (see
// BenchmarkCheckers).
func MutexCheckOperations(h History) (porcupine.Model, []porcupine.Operation) {
	model, ops := MutexOperations(h)
	return model, slices.DeleteFunc(ops, func(op porcupine.Operation) bool { return op.Output == Denied })
}
