package etcdnode

import (
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestMemberAgainstModel runs random requests against a member and the
// model, and against a twin member: the model's answers must match the
// member's (as the JSON a gateway would send), and the twin's must be the
// same values, nil and empty slices alike (determinism).
func TestMemberAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := &harness{t: rt, mem: New(Options{}), twin: New(Options{}), mod: newModel(), nextStream: 10}
		h.watchAll()
		rt.Repeat(map[string]func(*rapid.T){
			"put":       h.put,
			"delete":    h.delete,
			"range":     h.rangeReq,
			"txn":       h.txn,
			"grant":     h.grant,
			"revoke":    h.revoke,
			"keepalive": h.keepAlive,
			"ttl":       h.timeToLive,
			"tick":      h.tick,
			"restart":   h.restart,
			"":          h.checkDeliveries,
		})
		h.checkHistory()
	})
}

type harness struct {
	t          *rapid.T
	mem, twin  *Member
	mod        *model
	now        int64
	nextStream uint64
}

// same compares one answer of the member, its twin and the model.
func (h *harness) same(what string, got, twin, want any, gotErr, twinErr, wantErr error) {
	h.t.Helper()
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(gotErr, twinErr) {
		h.t.Fatalf("%s: not deterministic:\n%s %v\n%s %v", what, asJSON(got), gotErr, asJSON(twin), twinErr)
	}
	if errText(gotErr) != errText(wantErr) {
		h.t.Fatalf("%s: error %q, model %q (%s)", what, errText(gotErr), errText(wantErr), asJSON(got))
	}
	if gotErr == nil && asJSON(got) != asJSON(want) {
		h.t.Fatalf("%s:\nmember %s\nmodel  %s", what, asJSON(got), asJSON(want))
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	e := err.(*Error)
	return fmt.Sprintf("%s (code %d)", e.Msg, e.Code)
}

func (h *harness) maxRev() int64 { return h.mod.rev + 2 }

func (h *harness) put(t *rapid.T) {
	r := genPut().Draw(t, "put")
	got, gotErr := h.mem.Put(h.now, r)
	twin, twinErr := h.twin.Put(h.now, r)
	want, wantErr := h.mod.Put(r)
	h.same("put "+asJSON(r), got, twin, want, gotErr, twinErr, wantErr)
}

func (h *harness) delete(t *rapid.T) {
	r := genDelete().Draw(t, "delete")
	got, gotErr := h.mem.DeleteRange(h.now, r)
	twin, twinErr := h.twin.DeleteRange(h.now, r)
	want, wantErr := h.mod.DeleteRange(r)
	h.same("delete "+asJSON(r), got, twin, want, gotErr, twinErr, wantErr)
}

func (h *harness) rangeReq(t *rapid.T) {
	r := genRange(h.maxRev()).Draw(t, "range")
	got, gotErr := h.mem.Range(h.now, r)
	twin, twinErr := h.twin.Range(h.now, r)
	want, wantErr := h.mod.Range(r)
	h.same("range "+asJSON(r), got, twin, want, gotErr, twinErr, wantErr)
}

func (h *harness) txn(t *rapid.T) {
	r := genTxn(h.maxRev(), 2).Draw(t, "txn")
	got, gotErr := h.mem.Txn(h.now, r)
	twin, twinErr := h.twin.Txn(h.now, r)
	want, wantErr := h.mod.Txn(r)
	h.same("txn "+asJSON(r), got, twin, want, gotErr, twinErr, wantErr)
}

func (h *harness) grant(t *rapid.T) {
	r := &LeaseGrantRequest{TTL: rapid.SampledFrom([]int64{-1, 1, 2, 3, 5, 10, MaxLeaseTTLSeconds + 1}).Draw(t, "ttl"),
		ID: rapid.Int64Range(0, 3).Draw(t, "id")}
	got, gotErr := h.mem.LeaseGrant(h.now, r)
	twin, twinErr := h.twin.LeaseGrant(h.now, r)
	want, wantErr := h.mod.LeaseGrant(h.now, r)
	h.same("grant "+asJSON(r), got, twin, want, gotErr, twinErr, wantErr)
}

func (h *harness) revoke(t *rapid.T) {
	r := &LeaseRevokeRequest{ID: genLease.Draw(t, "id")}
	got, gotErr := h.mem.LeaseRevoke(h.now, r)
	twin, twinErr := h.twin.LeaseRevoke(h.now, r)
	want, wantErr := h.mod.LeaseRevoke(r)
	h.same("revoke "+asJSON(r), got, twin, want, gotErr, twinErr, wantErr)
}

func (h *harness) keepAlive(t *rapid.T) {
	r := &LeaseKeepAliveRequest{ID: genLease.Draw(t, "id")}
	got, ok := h.mem.LeaseKeepAlive(h.now, 2, r)
	twin, _ := h.twin.LeaseKeepAlive(h.now, 2, r)
	want, wantOK := h.mod.LeaseKeepAlive(h.now, r)
	if ok != wantOK {
		t.Fatalf("keep-alive %d answered now: %v, model %v", r.ID, ok, wantOK)
	}
	h.same("keep-alive", got, twin, want, nil, nil, nil)
}

func (h *harness) timeToLive(t *rapid.T) {
	r := &LeaseTimeToLiveRequest{ID: genLease.Draw(t, "id"), Keys: rapid.Bool().Draw(t, "keys")}
	got, _ := h.mem.LeaseTimeToLive(h.now, r)
	twin, _ := h.twin.LeaseTimeToLive(h.now, r)
	h.same("time to live", got, twin, h.mod.LeaseTimeToLive(h.now, r), nil, nil, nil)
}

func (h *harness) tick(t *rapid.T) {
	h.now += rapid.Int64Range(0, 3*sec).Draw(t, "dt")
	got, twin, want := h.mem.ExpireDue(h.now), h.twin.ExpireDue(h.now), h.mod.expireDue(h.now)
	h.same("expire due", got, twin, want, nil, nil, nil)
}

func (h *harness) restart(t *rapid.T) {
	h.mem.Restart(h.now)
	h.twin.Restart(h.now)
	h.mod.restart(h.now)
	if rapid.Bool().Draw(t, "rewatch") {
		h.watchAll()
	}
}

// watchAll opens a watch on every key from the next revision, with previous values.
func (h *harness) watchAll() {
	h.nextStream++
	r := &WatchCreateRequest{Key: b("\x00"), RangeEnd: b("\x00"), PrevKv: true}
	got, twin := h.mem.Watch(h.now, h.nextStream, r), h.twin.Watch(h.now, h.nextStream, r)
	want := []*WatchResponse{{Header: h.mod.header(h.mod.rev), Created: true}}
	h.same("watch", got, twin, want, nil, nil, nil)
	h.mod.watching = h.nextStream
}

func (h *harness) checkDeliveries(t *rapid.T) {
	got, twin := h.mem.TakeDeliveries(), h.twin.TakeDeliveries()
	h.same("deliveries", got, twin, h.mod.outbox, nil, nil, nil)
	h.mod.outbox = nil
}

// checkHistory watches from revision 1: the catch-up is the model's history.
func (h *harness) checkHistory() {
	h.checkDeliveries(h.t)
	got := h.mem.Watch(h.now, 1, &WatchCreateRequest{Key: b("\x00"), RangeEnd: b("\x00"), StartRevision: 1, PrevKv: true})
	want := []*WatchResponse{{Header: h.mod.header(h.mod.rev), Created: true}}
	var evs []*Event
	for _, v := range h.mod.hist {
		evs = append(evs, h.mod.event(v))
	}
	if len(evs) > 0 {
		want = append(want, &WatchResponse{Header: h.mod.header(h.mod.rev), Events: evs})
	}
	h.same("history", got, got, want, nil, nil, nil)
}
