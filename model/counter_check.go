package model

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// CheckCounter judges resource safety: found is true when the protected
// counter's accesses do not linearize as atomic operations (see
// CounterOperations), and the Violation (Kind LostUpdate) tells the story.
// Porcupine alone decides; the story then names the two increments that read
// the same value if there are such, else the first access no linearization
// could place. A history without resource accesses is skipped.
func CheckCounter(h History) (v Violation, found bool) {
	model, ops := CounterOperations(h)
	if len(ops) == 0 || porcupine.CheckOperations(model, ops) {
		return Violation{}, false
	}
	if v, ok := collidedIncrements(h, ops); ok {
		return v, true
	}
	return stuckAccess(h, model, ops), true
}

// collidedIncrements finds two increments by one that read the same value;
// of all such pairs, the one whose later write came first. With the counter
// only ever incremented, such a pair is by itself a lost update; the caller
// uses it only to tell the story of what porcupine rejected.
func collidedIncrements(h History, ops []porcupine.Operation) (Violation, bool) {
	var incs []porcupine.Operation
	for _, op := range ops {
		in := op.Input.(CounterInput)
		if in.Kind == Increment && in.Write == in.Read+1 {
			incs = append(incs, op)
		}
	}
	slices.SortStableFunc(incs, func(a, b porcupine.Operation) int {
		return cmp.Or(cmp.Compare(a.Input.(CounterInput).Read, b.Input.(CounterInput).Read), cmp.Compare(a.Return, b.Return))
	})
	best := -1 // index i such that incs[i-1], incs[i] read the same value
	for i := 1; i < len(incs); i++ {
		same := incs[i].Input.(CounterInput).Read == incs[i-1].Input.(CounterInput).Read
		if same && (best < 0 || incs[i].Return < incs[best].Return) {
			best = i
		}
	}
	if best < 0 {
		return Violation{}, false
	}
	first, second := incs[best-1].Input.(CounterInput), incs[best].Input.(CounterInput)
	a, b := clientName(h, first.Client), clientName(h, second.Client)
	if first.Client == second.Client {
		b = "again " + b
	}
	at := incs[best].Metadata.(CounterOpMeta).EndTime
	return Violation{
		Kind:    LostUpdate,
		Time:    at,
		Clients: []int{first.Client, second.Client},
		Story: fmt.Sprintf("%s and %s both read %d and wrote %d: one increment was lost at %s",
			a, b, first.Read, first.Write, Seconds(at)),
	}, true
}

// stuckAccess names the first access (by call) that porcupine's longest
// partial linearization could not place. It asks for no timeout, so the
// result depends only on the history.
func stuckAccess(h History, model porcupine.Model, ops []porcupine.Operation) Violation {
	_, info := porcupine.CheckOperationsVerbose(model, ops, 0)
	placed := make([]bool, len(ops))
	if parts := info.PartialLinearizations(); len(parts) > 0 {
		var longest []int
		for _, lin := range parts[0] {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
		for _, id := range longest {
			placed[id] = true
		}
	}
	stuck := 0
	for i := range ops {
		if !placed[i] {
			stuck = i
			break
		}
	}
	op := ops[stuck]
	meta := op.Metadata.(CounterOpMeta)
	return Violation{
		Kind:    LostUpdate,
		Time:    meta.StartTime,
		Clients: []int{op.ClientId},
		Story: fmt.Sprintf("the counter's accesses do not linearize: no order places %s at %s",
			model.DescribeOperation(op.Input, op.Output), Seconds(meta.StartTime)),
	}
}
