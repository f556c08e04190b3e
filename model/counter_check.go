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
// Porcupine decides, but for the one case whose answer is known without a
// search (see onlyIncrementsAndReads); the story then names the two
// increments that read the same value if there are such, else the first
// access no linearization could place. A history without resource accesses
// is skipped.
func CheckCounter(h History) (v Violation, found bool) { return new(Checker).checkCounter(h) }

// checkCounter is CheckCounter in c's memory.
func (c *Checker) checkCounter(h History) (Violation, bool) {
	c.counterOps = counterOpsInto(c.counterOps, h)
	ops := c.counterOps
	if len(ops) == 0 {
		return Violation{}, false
	}
	collided, found := c.collidedIncrements(h, ops)
	if found && onlyIncrementsAndReads(ops) {
		return collided, true // what porcupine would say, and most failing runs' case
	}
	if sequentialCounterOK(ops) {
		return Violation{}, false // what porcupine would say, without its goroutines
	}
	model := counterModel(h)
	c.ops = porcupineCounterOps(c.ops, ops)
	if porcupine.CheckOperations(model, c.ops) {
		return Violation{}, false
	}
	if found {
		return collided, true
	}
	return stuckAccess(h, model, c.ops), true
}

// onlyIncrementsAndReads reports whether every operation is an increment by
// one or a read. Then porcupine must reject any two increments that read the
// same value: in every order, each increment leaves the counter one higher
// and nothing lowers it (a read needs the value it saw, and the first
// operation fixes the unknown start), so the second of the two would find
// the counter above the value it read.
func onlyIncrementsAndReads(ops []counterOp) bool {
	for _, op := range ops {
		if op.in.Kind == BlindWrite || op.in.Kind == Increment && op.in.Write != op.in.Read+1 {
			return false
		}
	}
	return true
}

// collidedIncrements finds two increments by one that read the same value;
// of all such pairs, the one whose later write came first. With the counter
// only ever incremented, such a pair is by itself a lost update; the caller
// uses it only to tell the story of what porcupine rejected, or skips
// porcupine when the pair decides (onlyIncrementsAndReads).
func (c *Checker) collidedIncrements(h History, ops []counterOp) (Violation, bool) {
	incs := c.incs[:0] // indexes into ops
	for i, op := range ops {
		if op.in.Kind == Increment && op.in.Write == op.in.Read+1 {
			incs = append(incs, i)
		}
	}
	c.incs = incs
	slices.SortStableFunc(incs, func(a, b int) int {
		return cmp.Or(cmp.Compare(ops[a].in.Read, ops[b].in.Read), cmp.Compare(ops[a].ret, ops[b].ret))
	})
	best := -1 // index i such that incs[i-1], incs[i] read the same value
	for i := 1; i < len(incs); i++ {
		same := ops[incs[i]].in.Read == ops[incs[i-1]].in.Read
		if same && (best < 0 || ops[incs[i]].ret < ops[incs[best]].ret) {
			best = i
		}
	}
	if best < 0 {
		return Violation{}, false
	}
	first, second := ops[incs[best-1]].in, ops[incs[best]].in
	a, b := clientName(h, first.Client), clientName(h, second.Client)
	if first.Client == second.Client {
		b = "again " + b
	}
	at := ops[incs[best]].meta.EndTime
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
// set of partial linearizations depends only on the history; porcupine
// lists them in map order, so among equally long ones it takes the one that
// gets stuck latest: the verdict is the same on every check.
func stuckAccess(h History, model porcupine.Model, ops []porcupine.Operation) Violation {
	_, info := porcupine.CheckOperationsVerbose(model, ops, 0)
	stuck, longest := 0, -1
	if parts := info.PartialLinearizations(); len(parts) > 0 {
		placed := make([]bool, len(ops))
		for _, lin := range parts[0] {
			if len(lin) < longest {
				continue
			}
			clear(placed)
			for _, id := range lin {
				placed[id] = true
			}
			first := slices.Index(placed, false)
			if first < 0 {
				continue // every access placed: not what a rejection lists
			}
			if len(lin) > longest || first > stuck {
				stuck, longest = first, len(lin)
			}
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

// sequentialCounterOK reports whether ops (sorted by call) follow one
// another, each returning before the next is called, and are legal in that
// order. Then that order is the only linearization there is, and porcupine
// would accept the history: most runs of a correct lock are such, and the
// check skips porcupine's goroutine (whose start wakes another thread, a
// sixth of a small run's cost). Any other history goes to porcupine.
func sequentialCounterOK(ops []counterOp) bool {
	var s counterState
	for i, op := range ops {
		if i > 0 && ops[i-1].ret >= op.call {
			return false
		}
		ok, next := counterStep(s, op.in)
		if !ok {
			return false
		}
		s = next.(counterState)
	}
	return true
}
