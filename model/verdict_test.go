package model

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestAbortIsAPanicViolationInTimeOrder(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").acquire(1000, 0).acquire(2000, 1).endAt(9000).h
	h.Abort = &Abort{Kind: Panic, Client: 1, Time: 5000e6, Detail: "index out of range\ngoroutine 1 [running]:"}
	v := Check(h, DefaultCheckOptions())
	if len(v.Violations) != 2 || v.Violations[0].Kind != MutualExclusion || v.Violations[1].Kind != Panic {
		t.Fatalf("violations %+v", v.Violations)
	}
	p := v.Violations[1]
	if p.Time != 5000e6 || p.Story != "h1/t0 panicked at 5.000s: index out of range" || len(p.Clients) != 1 || p.Clients[0] != 1 {
		t.Fatalf("panic violation %+v", p)
	}
	if v.OK() {
		t.Fatal("verdict with violations is OK")
	}
}

func TestViolationsAtTheSameInstantSortByKind(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").acquire(1000, 0).acquire(2000, 1).endAt(9000).h
	h.Abort = &Abort{Kind: Livelock, Client: -1, Time: 2000e6, Detail: "event cap"}
	v := Check(h, DefaultCheckOptions())
	if len(v.Violations) != 2 || v.Violations[0].Kind != MutualExclusion || v.Violations[1].Kind != Livelock {
		t.Fatalf("violations %+v", v.Violations)
	}
	if v.Violations[1].Clients != nil {
		t.Fatalf("a run-wide livelock names clients: %+v", v.Violations[1])
	}
}

func TestCleanRunHasNoViolations(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").
		acquire(0, 0).read(10, 0, 0, true).write(20, 0, 1, true).release(30, 0).
		call(25, 1).deny(26, 1).
		acquire(40, 1).read(50, 1, 1, true).write(60, 1, 2, true).release(70, 1).endAt(100).h
	if v := Check(h, CheckOptions{Porcupine: true}); !v.OK() {
		t.Fatalf("violations %+v", v.Violations)
	}
}

func TestCheckFindsEveryKind(t *testing.T) {
	h := starved().h
	h.Healed = 0
	// A lost update and an overlap inside h0's hold.
	extra := newBuilder("h0/t0", "h1/t0").
		read(1000, 0, 5, true).acquire(1500, 1).read(2000, 1, 5, true).
		write(3000, 0, 6, true).write(3500, 1, 6, true).release(4000, 1).h.Events
	h.Events = append(extra, h.Events...)
	for i := range h.Events {
		h.Events[i].Seq = uint64(i + 1)
	}
	// Re-sort by time so Seq follows time, as the simulator would record it.
	h = resequenceByTime(h)
	v := Check(h, CheckOptions{Porcupine: true})
	kinds := []ViolationKind{}
	for _, x := range v.Violations {
		kinds = append(kinds, x.Kind)
	}
	if !reflect.DeepEqual(kinds, []ViolationKind{MutualExclusion, LostUpdate, Liveness}) {
		t.Fatalf("kinds %v", kinds)
	}
}

func TestMetrics(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").
		call(0, 0).grant(100, 0).
		call(200, 1).deny(300, 1).
		release(1000, 0).
		call(1100, 1).grant(1400, 1).release(2000, 1).
		endAt(4000).h
	h.Messages = 10
	h.Leftovers = []LockItem{{"n1", "h0"}, {"n2", "h0"}}
	got := Check(h, DefaultCheckOptions()).Metrics
	want := Metrics{
		Grants: 2, FailedAttempts: 1,
		AcquireP50: 200e6, AcquireP99: 298e6, // R-7 quantiles of {100ms, 300ms}
		Availability:      0.375, // held 0.1–1.0s and 1.4–2.0s of 4s
		MessagesPerGrant:  5,
		LongestNoHolderNS: 300e6, // h1 waiting 1.1–1.4s; 0–0.1s is shorter
		Leftovers:         2,
	}
	if math.Abs(got.Availability-want.Availability) > 1e-12 {
		t.Fatalf("availability %v, want %v", got.Availability, want.Availability)
	}
	got.Availability = want.Availability
	if got != want {
		t.Fatalf("metrics\n got %+v\nwant %+v", got, want)
	}
}

func TestAvailabilityCountsOverlapsOnce(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").acquire(0, 0).acquire(500, 1).release(1000, 0).release(1500, 1).endAt(2000).h
	if a := ComputeMetrics(h).Availability; a != 0.75 {
		t.Fatalf("availability %v, want 0.75", a)
	}
}

func TestInvalidOptions(t *testing.T) {
	var h History
	if _, err := CheckErr(h, CheckOptions{LivenessBoundTTLs: -1}); err == nil {
		t.Fatal("negative bound accepted")
	}
	var d *DisagreementError
	if _, err := CheckErr(h, CheckOptions{Porcupine: true}); errors.As(err, &d) {
		t.Fatal("empty history: checkers disagree")
	}
}

func TestZeroOptionsAreTheDefaults(t *testing.T) {
	h := History{TTL: 7}
	if (CheckOptions{}).LivenessBound(h) != DefaultCheckOptions().LivenessBound(h) {
		t.Fatal("zero options differ from the defaults")
	}
	if (CheckOptions{LivenessBoundNS: 5}).LivenessBound(h) != 5 {
		t.Fatal("absolute bound ignored")
	}
}

// Verdicts are compared by what they found, not by how a story words it.
func TestVerdictSameAsIgnoresStories(t *testing.T) {
	v := Verdict{Violations: []Violation{{Kind: MutualExclusion, Time: 5, Clients: []int{0, 1}, Story: "a and b both held"}}}
	w := v
	w.Violations = []Violation{{Kind: MutualExclusion, Time: 5, Clients: []int{0, 1}, Story: "reworded"}}
	if !v.SameAs(w) {
		t.Error("a reworded story made the verdicts differ")
	}
	w.Violations = []Violation{{Kind: MutualExclusion, Time: 6, Clients: []int{0, 1}, Story: "a and b both held"}}
	if v.SameAs(w) {
		t.Error("another time compared the same")
	}
	w.Violations = []Violation{{Kind: MutualExclusion, Time: 5, Clients: []int{0, 2}}}
	if v.SameAs(w) {
		t.Error("other clients compared the same")
	}
	if v.SameAs(Verdict{}) {
		t.Error("a verdict with a violation compared the same as one without")
	}
}

// A run's every violation is counted, and listed when asked: three
// overlapping grants are one mutual-exclusion violation of three, and
// Every lists the two after the first, in time order.
func TestEveryViolationCountedAndListed(t *testing.T) {
	b := newBuilder("h0/t0", "h1/t0")
	for ms := int64(0); ms < 30000; ms += 10000 {
		b.acquire(ms, 0).acquire(ms+1000, 1).release(ms+2000, 0).release(ms+3000, 1)
	}
	h := b.endAt(40000).h
	v := Check(h, DefaultCheckOptions())
	first, ok := v.First(MutualExclusion)
	if !ok || first.Count != 3 || first.Time != 1000e6 || len(v.Later) != 0 {
		t.Fatalf("want the first of 3 overlaps and none listed, got %+v", v)
	}
	if !strings.Contains(first.String(), "(the first of 3)") {
		t.Fatalf("the count is not said: %s", first)
	}
	opts := DefaultCheckOptions()
	opts.Every = true
	all := Check(h, opts)
	if len(all.Later) != 2 || all.Later[0].Time != 11000e6 || all.Later[1].Time != 21000e6 {
		t.Fatalf("want the overlaps at 11s and 21s listed, got %+v", all.Later)
	}
	if !all.SameAs(v) {
		t.Fatal("listing every violation changed the verdict's comparison")
	}
}

// What the coordinator recorded of a Lock's retry promise (a call that gave
// up while the lock was free, a client that stayed in its call while it
// was free) is judged as liveness, each kind counted, in time order, and
// not at all when liveness is skipped.
func TestRetryPromiseFindingsAreLiveness(t *testing.T) {
	h := newBuilder("h0/t0", "h1/t0").acquire(1000, 0).release(1500, 0).endAt(9000).h
	h.Starved = []Starved{
		{Client: 1, Called: 1200e6, Gap: 250e6, FreeFrom: 2000e6, FreeTo: 2600e6, Nodes: []string{"n0", "n1"}, Asked: 3},
		{Client: 1, Called: 4000e6, Gap: 250e6, FreeFrom: 5000e6, FreeTo: 5600e6, Nodes: []string{"n0"}, Asked: 1},
	}
	h.GaveUps = []GaveUp{{Client: 0, Called: 1600e6, Time: 1700e6, Promised: 3600e6, Gap: 250e6, FreeFrom: 1800e6, FreeTo: 2400e6, Nodes: []string{"n2"}, Asked: 1}}
	v := Check(h, CheckOptions{Every: true})
	var kinds []ViolationKind
	for _, x := range v.Violations {
		if !x.Kind.IsLiveness() || x.Kind.IsSafety() {
			t.Fatalf("%s is not judged as liveness", x.Kind)
		}
		kinds = append(kinds, x.Kind)
	}
	if !reflect.DeepEqual(kinds, []ViolationKind{GaveUpWhileFree, StarvedWhileFree}) {
		t.Fatalf("violations %+v", v.Violations)
	}
	s := v.Violations[1]
	if s.Time != 2000e6 || s.End != 2600e6 || s.Count != 2 || !reflect.DeepEqual(s.Clients, []int{1}) ||
		!strings.Contains(s.Story, "h1/t0 was inside its Lock (called at 1.200s) while the lock was free on n0, n1 (2 of the 3 nodes it asked") {
		t.Fatalf("starved violation %+v", s)
	}
	if len(v.Later) != 1 || v.Later[0].Kind != StarvedWhileFree || v.Later[0].Time != 5000e6 {
		t.Fatalf("later %+v", v.Later)
	}
	if v := Check(h, CheckOptions{SkipLiveness: true}); len(v.Violations) != 0 {
		t.Fatalf("liveness skipped, yet %+v", v.Violations)
	}
}
