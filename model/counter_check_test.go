package model

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
)

// sequentialCounterOK agrees with porcupine on every history it accepts,
// and refuses overlapping ones: random counter histories, some sequential
// and some not, some legal and some not.
func TestSequentialCounterAgreesWithPorcupine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	accepted, refused := 0, 0
	for range 5000 {
		var ops []counterOp
		seq, value := int64(1), r.Int64N(3)
		for range 1 + r.IntN(6) {
			in := CounterInput{Client: r.IntN(3), Kind: CounterOpKind(1 + r.IntN(3)), Read: value, Write: value + 1}
			if r.IntN(8) == 0 {
				in.Read += int64(r.IntN(3)) - 1 // a stale read, now and then
			}
			call, ret := seq, seq+int64(r.IntN(3))
			if in.Kind != Increment {
				ret = call
			}
			if r.IntN(6) == 0 && call > 1 {
				call-- // overlaps the one before, now and then
			}
			ops = append(ops, counterOp{in: in, call: call, ret: ret})
			seq = ret + 1
			if in.Kind != ReadOnly {
				value = in.Write
			}
		}
		slices.SortStableFunc(ops, func(a, b counterOp) int { return cmp.Compare(a.call, b.call) })
		got := sequentialCounterOK(ops)
		want := porcupine.CheckOperations(counterModel(History{}), porcupineCounterOps(nil, ops))
		if got && !want {
			t.Fatalf("accepted what porcupine rejects: %+v", ops)
		}
		if got {
			accepted++
		} else {
			refused++
		}
	}
	if accepted < 1000 || refused < 500 {
		t.Fatalf("the cases are lopsided: %d accepted, %d refused", accepted, refused)
	}
}
