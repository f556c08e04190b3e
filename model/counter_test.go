package model

import (
	"slices"
	"strings"
	"testing"
)

func TestSerialIncrementsAreSafe(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").
		read(1000, 0, 0, true).write(1100, 0, 1, true).
		read(2000, 1, 1, true).write(2100, 1, 2, true).
		read(3000, 0, 2, true).write(3100, 0, 3, true).h
	if v, found := CheckCounter(h); found {
		t.Fatalf("false lost update: %v", v.Story)
	}
}

func TestLostUpdateFound(t *testing.T) {
	// Both read 5 and both write 6: one increment vanished.
	h := newBuilder("h0/t0", "h1/t0").
		read(1000, 0, 4, true).write(1100, 0, 5, true).
		read(2000, 0, 5, true).
		read(2500, 1, 5, true).
		write(3000, 0, 6, true).
		write(3500, 1, 6, true).h
	v, found := CheckCounter(h)
	if !found {
		t.Fatal("lost update not found")
	}
	want := "h0/t0 and h1/t0 both read 5 and wrote 6: one increment was lost at 3.500s"
	if v.Kind != LostUpdate || v.Time != 3500e6 || !slices.Equal(v.Clients, []int{0, 1}) || v.Story != want {
		t.Fatalf("got %+v", v)
	}
}

func TestFencedRejectedWriteIsNotALostUpdate(t *testing.T) {
	// h0 (old token) reads 5 and pauses; h1 (newer token) reads 5, writes
	// 6; h0 wakes and writes 6 with its old token: fencing rejects it.
	b := newBuilder("h0/t0", "h1/t0").
		read(1000, 0, 5, true).
		read(2000, 1, 5, true).write(2100, 1, 6, true).
		read(3000, 1, 6, true).write(3100, 1, 7, true)
	fenced := *b
	fenced.h.Events = slices.Clone(b.h.Events)
	fenced.write(4000, 0, 6, false).read(5000, 0, 7, false)
	if v, found := CheckCounter(fenced.h); found {
		t.Fatalf("rejected write judged a lost update: %v", v.Story)
	}
	// Without fencing the same write lands: the lost update is real.
	b.write(4000, 0, 6, true)
	if _, found := CheckCounter(b.h); !found {
		t.Fatal("accepted stale write not found")
	}
}

func TestReadWithoutWriteMustSeeTheCounter(t *testing.T) {
	// h0 reads and stops before writing: a read-only op that must still be
	// consistent. Here h1's read of 3 is consistent...
	b := newBuilder("h0/t0", "h1/t0").
		read(1000, 0, 3, true).stop(1500, 0).
		read(2000, 1, 3, true).write(2100, 1, 4, true)
	if v, found := CheckCounter(b.h); found {
		t.Fatalf("false lost update: %v", v.Story)
	}
	// ... but a read of 3 after the counter became 4 is not.
	b.read(3000, 0, 3, true)
	v, found := CheckCounter(b.h)
	if !found {
		t.Fatal("stale read-only access not found")
	}
	if !strings.Contains(v.Story, "h0/t0 read 3") || v.Time != 3000e6 {
		t.Fatalf("story names the wrong access: %+v", v)
	}
}

func TestCounterOperationsPairReadsWithWrites(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").
		read(1000, 0, 5, true).
		read(1100, 1, 0, false).  // rejected read: dropped
		write(1200, 1, 9, true).  // no accepted read before: blind write
		write(1300, 0, 6, false). // rejected write: h0's read stays a read
		read(1400, 0, 9, true).write(1500, 0, 10, true).
		read(1600, 1, 10, true).h // never written
	_, ops := CounterOperations(h)
	var got []CounterInput
	for _, op := range ops {
		got = append(got, op.Input.(CounterInput))
	}
	want := []CounterInput{
		{Client: 0, Kind: ReadOnly, Read: 5},
		{Client: 1, Kind: BlindWrite, Write: 9},
		{Client: 0, Kind: Increment, Read: 9, Write: 10},
		{Client: 1, Kind: ReadOnly, Read: 10},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ops\n got %+v\nwant %+v", got, want)
	}
	if ops[2].Call != 5 || ops[2].Return != 6 {
		t.Fatalf("increment interval [%d,%d], want [5,6] (read.Seq, write.Seq)", ops[2].Call, ops[2].Return)
	}
}

func TestNoResourceEventsNoCounterCheck(t *testing.T) {
	h := newBuilder("h0/t0").acquire(0, 0).release(1, 0).h
	if _, found := CheckCounter(h); found {
		t.Fatal("violation without resource events")
	}
}
