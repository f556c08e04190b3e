package etcdnode

import (
	"fmt"
	"slices"
	"testing"
)

// eventsOf summarises events as "PUT k@rev" / "DELETE k@rev", with "<prev@rev"
// when a previous value came along.
func eventsOf(evs []*Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%s %s@%d", eventTypeNames[ev.Type], ev.Kv.Key, ev.Kv.ModRevision)
		if ev.PrevKv != nil {
			out[i] += fmt.Sprintf("<%s@%d", ev.PrevKv.Value, ev.PrevKv.ModRevision)
		}
	}
	return out
}

func TestWatchCreatedAndCatchUp(t *testing.T) {
	m := New(Options{})
	mustPut(t, m, "a", "1", 0)                         // 2
	mustPut(t, m, "b", "1", 0)                         // 3
	mustPut(t, m, "a", "2", 0)                         // 4
	m.DeleteRange(0, &DeleteRangeRequest{Key: b("a")}) // 5
	out := m.Watch(0, 1, &WatchCreateRequest{Key: b("a"), StartRevision: 3, PrevKv: true})
	if len(out) != 2 || !out[0].Created || out[0].WatchId != 0 || out[0].Header.Revision != 5 {
		t.Fatalf("watch = %s", asJSON(out))
	}
	want := []string{"PUT a@4<1@2", "DELETE a@5<2@4"}
	if got := eventsOf(out[1].Events); !slices.Equal(got, want) || out[1].Header.Revision != 5 || out[1].WatchId != 0 {
		t.Fatalf("catch-up %q (%s), want %q", got, asJSON(out[1].Header), want)
	}
	if d := out[1].Events[1].Kv; d.CreateRevision != 0 || d.Version != 0 || d.Value != nil {
		t.Fatalf("a DELETE event's kv holds only key and revision: %s", asJSON(d))
	}
	// Start 0 (the next revision) and a start in the future send no catch-up.
	if out := m.Watch(0, 1, &WatchCreateRequest{Key: b("a")}); len(out) != 1 || out[0].WatchId != 1 {
		t.Fatalf("watch from now = %s", asJSON(out))
	}
	if out := m.Watch(0, 1, &WatchCreateRequest{Key: b("a"), StartRevision: 7}); len(out) != 1 || out[0].WatchId != 2 {
		t.Fatalf("future watch = %s", asJSON(out))
	}
	mustPut(t, m, "a", "3", 0) // 6: watches 0 and 1, not 2
	mustPut(t, m, "a", "4", 0) // 7: all three
	var got []string
	for _, d := range m.TakeDeliveries() {
		got = append(got, fmt.Sprintf("%d/%d %q", d.Stream, d.Watch.WatchId, eventsOf(d.Watch.Events)))
	}
	want = []string{`1/0 ["PUT a@6"]`, `1/1 ["PUT a@6"]`, `1/0 ["PUT a@7<3@6"]`, `1/1 ["PUT a@7"]`, `1/2 ["PUT a@7"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("deliveries\n%q\nwant\n%q", got, want)
	}
}

func TestWatchIDsAndRefusals(t *testing.T) {
	m := New(Options{})
	ids := func(out []*WatchResponse) string { return asJSON(out[0]) }
	if out := m.Watch(0, 5, &WatchCreateRequest{Key: b("k"), WatchId: 1}); out[0].WatchId != 1 {
		t.Fatalf("requested ID: %s", ids(out))
	}
	for _, want := range []int64{0, 2, 3} { // automatic IDs skip taken ones, per stream
		if out := m.Watch(0, 5, &WatchCreateRequest{Key: b("k")}); out[0].WatchId != want {
			t.Fatalf("automatic ID %s, want %d", ids(out), want)
		}
	}
	if out := m.Watch(0, 6, &WatchCreateRequest{Key: b("k")}); out[0].WatchId != 0 {
		t.Fatalf("another stream starts from 0: %s", ids(out))
	}
	refused := []struct {
		r      WatchCreateRequest
		reason string
	}{
		{WatchCreateRequest{Key: b("k"), WatchId: 2}, ReasonDuplicateWatchID},
		{WatchCreateRequest{Key: b("b"), RangeEnd: b("a")}, ReasonEmptyWatchRange},
		{WatchCreateRequest{Key: b("a"), RangeEnd: b("a")}, ReasonEmptyWatchRange},
		{WatchCreateRequest{Key: b("k"), StartRevision: -1}, ReasonCompacted},
	}
	for _, c := range refused {
		out := m.Watch(0, 5, &c.r)
		if len(out) != 1 || !out[0].Created || !out[0].Canceled || out[0].WatchId != -1 || out[0].CancelReason != c.reason {
			t.Errorf("%s: %s, want refused with %q", asJSON(c.r), ids(out), c.reason)
		}
	}
	if c := m.CancelWatch(0, 5, 2); c == nil || !c.Canceled || c.WatchId != 2 || c.Header.Revision != 1 {
		t.Fatalf("cancel = %s", asJSON(c))
	}
	if c := m.CancelWatch(0, 5, 2); c != nil {
		t.Fatalf("second cancel answered: %s", asJSON(c))
	}
	if out := m.Watch(0, 5, &WatchCreateRequest{Key: b("k")}); out[0].WatchId != 4 {
		t.Fatalf("automatic IDs do not go back: %s", ids(out))
	}
	m.CloseStream(5)
	mustPut(t, m, "k", "v", 0)
	if d := m.TakeDeliveries(); len(d) != 1 || d[0].Stream != 6 {
		t.Fatalf("after closing stream 5: %s", asJSON(d))
	}
}

func TestWatchFiltersRangesAndEmptyKey(t *testing.T) {
	m := New(Options{})
	m.Watch(0, 1, &WatchCreateRequest{Key: b("p/"), RangeEnd: b("p0"), Filters: []FilterType{FilterNoPut}})
	m.Watch(0, 2, &WatchCreateRequest{RangeEnd: b("\x00"), Filters: []FilterType{FilterNoDelete}}) // "" is "\x00": everything
	m.Watch(0, 3, &WatchCreateRequest{Key: b("p/x"), ProgressNotify: true, Fragment: true})
	m.Txn(0, &TxnRequest{Success: []*RequestOp{putOp("p/x", 0), putOp("q", 0)}}) // 2
	m.DeleteRange(0, &DeleteRangeRequest{Key: b("p/"), RangeEnd: b("p0")})       // 3
	var got []string
	for _, d := range m.TakeDeliveries() {
		got = append(got, fmt.Sprintf("%d %q", d.Stream, eventsOf(d.Watch.Events)))
	}
	want := []string{`2 ["PUT p/x@2" "PUT q@2"]`, `3 ["PUT p/x@2"]`, `1 ["DELETE p/x@3"]`, `3 ["DELETE p/x@3"]`}
	if !slices.Equal(got, want) {
		t.Fatalf("deliveries\n%q\nwant\n%q", got, want)
	}
	if u := m.Unsupported(); !slices.Equal(u, []string{"watch fragment", "watch progress_notify"}) {
		t.Fatalf("Unsupported() = %q", u)
	}
}

func TestWatchCatchUpBatches(t *testing.T) {
	m := New(Options{})
	for i := range 3000 { // k0 and k1 change in 2000 revisions

		mustPut(t, m, fmt.Sprintf("k%d", i%3), "v", 0)
	}
	out := m.Watch(0, 1, &WatchCreateRequest{Key: b("k0"), RangeEnd: b("k2"), StartRevision: 1})
	if len(out) != 3 || len(out[1].Events) != watchBatchMaxRevs || len(out[2].Events) != 1000 {
		t.Fatalf("batches of %d, %d events", len(out[1].Events), len(out[2].Events))
	}
	if out[1].Header.Revision != 3001 || out[2].Header.Revision != 3001 || out[2].Events[0].Kv.ModRevision != 1502 {
		t.Fatalf("second batch starts at %d", out[2].Events[0].Kv.ModRevision)
	}
}

func TestRequestProgress(t *testing.T) {
	m := New(Options{})
	if p := m.RequestProgress(0, 1); p != nil {
		t.Fatalf("progress without watches: %s", asJSON(p))
	}
	m.Watch(0, 1, &WatchCreateRequest{Key: b("k")})
	mustPut(t, m, "j", "v", 0)
	if p := m.RequestProgress(0, 1); p == nil || p.WatchId != -1 || p.Header.Revision != 2 || len(p.Events) != 0 {
		t.Fatalf("progress = %s", asJSON(p))
	}
	m.Watch(0, 1, &WatchCreateRequest{Key: b("k"), StartRevision: 9})
	if p := m.RequestProgress(0, 1); p != nil {
		t.Fatalf("progress with a watch from the future: %s", asJSON(p))
	}
	if p := m.RequestProgress(0, 2); p != nil {
		t.Fatalf("progress on another stream: %s", asJSON(p))
	}
}
