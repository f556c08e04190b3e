package model

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// genMutexHistory draws a few clients cycling through acquire, hold and
// belief end, in random interleavings with equal times common. A "polite"
// history grants only a free lock, so clean and overlapping histories are
// both frequent; clients sometimes stop mid-acquire or while holding.
func genMutexHistory(t *rapid.T) History {
	const (
		idle = iota
		calling
		holding
		stopped
	)
	n := rapid.IntRange(1, 4).Draw(t, "clients")
	polite := rapid.Bool().Draw(t, "polite")
	b := newBuilder("h0/t0", "h1/t0", "h2/t0", "h3/t0")
	b.h.Clients = b.h.Clients[:n]
	state := make([]int, n)
	holders := 0
	now := int64(0)
	for range rapid.IntRange(0, 60).Draw(t, "steps") {
		c := rapid.IntRange(0, n-1).Draw(t, "client")
		now += int64(rapid.IntRange(0, 2).Draw(t, "dt"))
		roll := rapid.IntRange(0, 9).Draw(t, "roll")
		switch {
		case state[c] == idle:
			b.call(now, c)
			state[c] = calling
		case state[c] == calling && roll == 0:
			b.stop(now, c)
			state[c] = stopped
		case state[c] == calling && roll < 6 && (!polite || holders == 0):
			b.grant(now, c)
			state[c], holders = holding, holders+1
		case state[c] == calling:
			b.deny(now, c)
			state[c] = idle
		case state[c] == holding && roll == 0:
			b.stop(now, c)
			state[c], holders = stopped, holders-1
		case state[c] == holding && roll < 5:
			b.end(now, c, []string{"release", "expired"}[roll%2])
			state[c], holders = idle, holders-1
		}
		// Otherwise a holder keeps holding, so impolite grants overlap often.
	}
	return b.endAt(now + 1).h
}

// bruteFirstOverlap compares every pair of holds: the earliest start of an
// overlap, or -1.
func bruteFirstOverlap(h History) int64 {
	holds, first := Holds(h), int64(-1)
	for i, a := range holds {
		for _, b := range holds[i+1:] {
			if a.StartSeq < b.EndSeq && b.StartSeq < a.EndSeq {
				at := max(a.StartTime, b.StartTime)
				if first < 0 || at < first {
					first = at
				}
			}
		}
	}
	return first
}

func TestPropertySweepAgreesWithPorcupine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genMutexHistory(t)
		v, found := FirstOverlap(h)
		if ok := CheckMutexPorcupine(h); ok == found {
			t.Fatalf("sweep found=%v (%s), porcupine ok=%v", found, v.Story, ok)
		}
		if brute := bruteFirstOverlap(h); (brute >= 0) != found || found && v.Time != brute {
			t.Fatalf("sweep found=%v at %d, pairwise first overlap at %d", found, v.Time, brute)
		}
		// The verdict is a pure function of the history.
		v1, v2 := Check(h, CheckOptions{Porcupine: true}), Check(h, DefaultCheckOptions())
		if !reflect.DeepEqual(v1, v2) {
			t.Fatalf("verdicts differ:\n%+v\n%+v", v1, v2)
		}
	})
}

// genCounterHistory draws clients doing read-modify-write on a register:
// each reads the current value, then later writes what it read plus one.
// Interleavings make lost updates; a rare "stale" read of a wrong value makes
// histories no pair of increments explains.
func genCounterHistory(t *rapid.T) History {
	n := rapid.IntRange(1, 4).Draw(t, "clients")
	b := newBuilder("h0/t0", "h1/t0", "h2/t0", "h3/t0")
	b.h.Clients = b.h.Clients[:n]
	register := int64(rapid.IntRange(0, 3).Draw(t, "start"))
	read := make([]int64, n)
	reading := make([]bool, n)
	now := int64(0)
	for range rapid.IntRange(0, 40).Draw(t, "steps") {
		c := rapid.IntRange(0, n-1).Draw(t, "client")
		now += int64(rapid.IntRange(0, 2).Draw(t, "dt"))
		roll := rapid.IntRange(0, 19).Draw(t, "roll")
		switch {
		case !reading[c] && roll == 0:
			b.read(now, c, register+1, true) // a value the register never held
			read[c], reading[c] = register+1, true
		case !reading[c]:
			accepted := roll > 2
			b.read(now, c, register, accepted)
			read[c], reading[c] = register, accepted
		case roll < 3: // fenced: the write does not land
			b.write(now, c, read[c]+1, false)
			reading[c] = false
		case roll < 5: // gives up before writing
			reading[c] = false
		default:
			b.write(now, c, read[c]+1, true)
			register, reading[c] = read[c]+1, false
		}
	}
	return b.endAt(now + 1).h
}

// incrementsLinearize is an exact, cheap checker for histories of increments
// (Write == Read+1) and reads: the counter only grows, so the increments must
// have read v0, v0+1, ... once each, every read must see a value of that
// chain, and the order is forced but for reads of one value among themselves.
// It then only remains to check real time: no operation may return before an
// operation placed earlier was called.
func incrementsLinearize(ops []porcupine.Operation) bool {
	if len(ops) == 0 {
		return true
	}
	v0 := slices.MinFunc(ops, func(a, b porcupine.Operation) int {
		return cmp.Compare(a.Input.(CounterInput).Read, b.Input.(CounterInput).Read)
	}).Input.(CounterInput).Read
	var incs []porcupine.Operation
	var reads [][]porcupine.Operation // by value - v0
	for _, op := range ops {
		in := op.Input.(CounterInput)
		if in.Kind == Increment {
			incs = append(incs, op)
		}
	}
	slices.SortFunc(incs, func(a, b porcupine.Operation) int {
		return cmp.Compare(a.Input.(CounterInput).Read, b.Input.(CounterInput).Read)
	})
	for i, op := range incs {
		if op.Input.(CounterInput).Read != v0+int64(i) {
			return false // a value read twice, or one skipped
		}
	}
	reads = make([][]porcupine.Operation, len(incs)+1)
	for _, op := range ops {
		in := op.Input.(CounterInput)
		if in.Kind == ReadOnly {
			g := in.Read - v0
			if g > int64(len(incs)) {
				return false
			}
			reads[g] = append(reads[g], op)
		}
	}
	maxCall := int64(-1) // over everything placed before the current group
	for g := range reads {
		groupMax := maxCall
		for _, r := range reads[g] {
			if r.Return < maxCall {
				return false
			}
			groupMax = max(groupMax, r.Call)
		}
		maxCall = groupMax
		if g < len(incs) {
			if incs[g].Return < maxCall {
				return false
			}
			maxCall = max(maxCall, incs[g].Call)
		}
	}
	return true
}

func TestPropertyCounterReferenceAgreesWithPorcupine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genCounterHistory(t)
		model, ops := CounterOperations(h)
		want := incrementsLinearize(ops)
		if got := porcupine.CheckOperations(model, ops); got != want {
			t.Fatalf("porcupine ok=%v, reference ok=%v", got, want)
		}
		if _, found := CheckCounter(h); found == want {
			t.Fatalf("CheckCounter found=%v, reference ok=%v", found, want)
		}
	})
}
