package model

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
)

// mutexVerdicts runs both mutual-exclusion checkers and fails the test if
// they disagree, so every hand-made history below cross-checks them too.
func mutexVerdicts(t *testing.T, h History) (Violation, bool) {
	t.Helper()
	v, found := FirstOverlap(h)
	if ok := CheckMutexPorcupine(h); ok == found {
		t.Fatalf("sweep found=%v but porcupine ok=%v", found, ok)
	}
	return v, found
}

func TestOverlapNamesClientsAndTime(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0", "h2/t0").
		acquire(12001, 0).
		call(30000, 2).deny(30010, 2).
		acquire(61002, 1).
		release(70000, 0).release(71000, 1).h
	v, found := mutexVerdicts(t, h)
	if !found {
		t.Fatal("overlap not found")
	}
	want := "h0/t0 and h1/t0 both held the lock from 61.002s (h0/t0 since 12.001s)"
	if v.Kind != MutualExclusion || v.Time != 61002e6 || !slices.Equal(v.Clients, []int{0, 1}) || v.Story != want {
		t.Fatalf("got %+v", v)
	}
}

func TestFirstOverlapIsTheEarliest(t *testing.T) {
	// h0 holds from 1s to 4s; h2 overlaps it from 2s, h1 from 3s: the
	// first overlap is h0 with h2.
	h := newBuilder("h0/t0", "h1/t0", "h2/t0").
		acquire(1000, 0).
		acquire(2000, 2).release(2500, 2).
		acquire(3000, 1).release(3500, 1).
		release(4000, 0).h
	v, _ := mutexVerdicts(t, h)
	if v.Time != 2000e6 || !slices.Equal(v.Clients, []int{0, 2}) {
		t.Fatalf("got %+v, want h0 and h2 at 2s", v)
	}
}

func TestBackToBackHoldsAtEqualTimesDoNotOverlap(t *testing.T) {
	// h0's belief ends and h1 is granted at the same instant; Seq says the
	// end came first.
	h := newBuilder("h0/t0", "h1/t0").
		acquire(1000, 0).
		call(4000, 1).
		end(5000, 0, "release").
		grant(5000, 1).
		release(6000, 1).h
	if v, found := mutexVerdicts(t, h); found {
		t.Fatalf("false overlap: %v", v.Story)
	}
	// The same instants with the grant first in Seq order do overlap: times
	// alone cannot tell these two histories apart.
	h = newBuilder("h0/t0", "h1/t0").
		acquire(1000, 0).
		call(4000, 1).
		grant(5000, 1).
		end(5000, 0, "release").
		release(6000, 1).h
	if _, found := mutexVerdicts(t, h); !found {
		t.Fatal("overlap at equal times, grant first, not found")
	}
}

func TestExpiredBeliefEndsTheHold(t *testing.T) {
	// h0's validity passes at 60s; it only calls Release at 90s. h1 is
	// granted at 61s: not an overlap, h0 no longer believed.
	h := newBuilder("h0/t0", "h1/t0").
		acquire(0, 0).
		end(60000, 0, "expired").
		acquire(61000, 1).
		add(90000, 0, ReleaseCall, nil).add(90001, 0, ReleaseReturn, nil).
		release(95000, 1).h
	if v, found := mutexVerdicts(t, h); found {
		t.Fatalf("false overlap: %v", v.Story)
	}
	holds := Holds(h)
	if len(holds) != 2 || holds[0].EndReason != "expired" || holds[0].EndTime != 60000e6 || holds[0].Open {
		t.Fatalf("holds %+v", holds)
	}
}

func TestHoldOpenToTheEndOverlapsLaterGrant(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").acquire(0, 0).acquire(61000, 1).endAt(100000).h
	if _, found := mutexVerdicts(t, h); !found {
		t.Fatal("a never-ended belief must overlap a later grant")
	}
	if hd := Holds(h)[0]; !hd.Open || hd.EndSeq != OpenEnd || hd.EndTime != 100000e6 {
		t.Fatalf("open hold %+v", hd)
	}
}

func TestStoppedHolderStopsBelieving(t *testing.T) {
	// h0 crashes while holding; its lock item expires; h1 takes the lock.
	h := newBuilder("h0/t0", "h1/t0").
		acquire(0, 0).stop(10000, 0).
		acquire(70000, 1).release(80000, 1).h
	if v, found := mutexVerdicts(t, h); found {
		t.Fatalf("a crashed holder counted as still believing: %v", v.Story)
	}
	if hd := Holds(h)[0]; hd.EndReason != ReasonStopped || hd.EndTime != 10000e6 {
		t.Fatalf("hold %+v", hd)
	}
}

func TestUnknownAcquireIsAcceptedEitherWay(t *testing.T) {
	// h0 stops mid-acquire: maybe it got the lock, maybe not. h1 is then
	// granted and releases; h2 calls and is granted while h0's attempt is
	// still "in flight" forever.
	h := newBuilder("h0/t0", "h1/t0", "h2/t0").
		call(1000, 0).
		acquire(2000, 1).
		stop(2500, 0).
		release(3000, 1).
		acquire(4000, 2).release(5000, 2).h
	if v, found := mutexVerdicts(t, h); found {
		t.Fatalf("false overlap: %v", v.Story)
	}
	_, ops := MutexOperations(h)
	var unknown []porcupine.Operation
	for _, op := range ops {
		if op.Output == Unknown {
			unknown = append(unknown, op)
		}
	}
	if len(unknown) != 1 || unknown[0].Return < math.MaxInt64-int64(len(ops)) || unknown[0].Call != 1 {
		t.Fatalf("unknown ops %+v", unknown)
	}
	// Either outcome is a possible next state.
	if got := mutexStep(noHolder, MutexInput{Client: 0}, Unknown); len(got) != 2 {
		t.Fatalf("unknown acquire on a free lock: states %v, want granted and not", got)
	}
	if got := mutexStep(1, MutexInput{Client: 0}, Unknown); len(got) != 1 || got[0] != 1 {
		t.Fatalf("unknown acquire on a held lock: states %v, want only 'not granted'", got)
	}
}

func TestMutexStepRules(t *testing.T) {
	if len(mutexStep(1, MutexInput{Client: 0}, Granted)) != 0 {
		t.Error("grant of a held lock accepted")
	}
	if got := mutexStep(1, MutexInput{Client: 0}, Denied); len(got) != 1 || got[0] != 1 {
		t.Error("denied acquire must be legal and change nothing")
	}
	if len(mutexStep(1, MutexInput{Client: 0, Release: true}, nil)) != 0 {
		t.Error("release by a non-holder accepted")
	}
	if got := mutexStep(0, MutexInput{Client: 0, Release: true}, nil); len(got) != 1 || got[0] != noHolder {
		t.Error("release by the holder must free the lock")
	}
}

func TestMutexOperationsUseSeqNotTime(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").call(1000, 0).grant(1000, 0).release(1000, 0).h
	_, ops := MutexOperations(h)
	if len(ops) != 2 || ops[0].Call != 1 || ops[0].Return != 2 || ops[1].Call != 3 || ops[1].Return != 3 {
		t.Fatalf("ops %+v", ops)
	}
}

func TestMutexVisualizationRenders(t *testing.T) {
	// Not a golden test (porcupine's HTML is not byte-stable): it checks the
	// model's descriptions reach the page, with client names and true times.
	h := newBuilder("h0/t0", "h1/t0", "h2/t0").
		acquire(0, 0).call(500, 2).stop(600, 2).acquire(700, 1).release(800, 0).h
	model, ops := MutexOperations(h)
	res, info := porcupine.CheckOperationsVerbose(model, ops, 0)
	if res != porcupine.Illegal {
		t.Fatalf("result %v, want Illegal", res)
	}
	var out bytes.Buffer
	if err := porcupine.Visualize(model, info, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`h1/t0 acquire -\u003e granted`, "held by h0/t0", "h2/t0 acquire -\\u003e unknown", "t=0.500s..0.600s"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("visualisation lacks %q", want)
		}
	}
}

func TestEventsOutOfOrderAreJudgedBySeq(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").acquire(0, 0).release(10, 0).acquire(10, 1).release(20, 1).h
	slices.Reverse(h.Events)
	if v, found := mutexVerdicts(t, h); found {
		t.Fatalf("false overlap from unsorted events: %v", v.Story)
	}
}
