package etcdnode

import (
	"encoding/json"
	"testing"
)

// TestGatewayJSON decodes what etcd 3.4.23's gateway sent (captured with
// curl) and encodes a request the way the gateway reads it.
func TestGatewayJSON(t *testing.T) {
	const watch = `{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"4","raft_term":"2"},` +
		`"events":[{"kv":{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ=="}},` +
		`{"type":"DELETE","kv":{"key":"YQ==","mod_revision":"4"},"prev_kv":{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ=="}}]}`
	var w WatchResponse
	if err := json.Unmarshal([]byte(watch), &w); err != nil {
		t.Fatal(err)
	}
	if w.Header.ClusterId != 15118495548433857066 || w.Header.RaftTerm != 2 || w.Events[0].Type != EventPut ||
		w.Events[1].Type != EventDelete || string(w.Events[1].PrevKv.Value) != "1" || w.Events[1].Kv.ModRevision != 4 {
		t.Fatalf("decoded %+v", w)
	}
	var r RangeRequest
	if err := json.Unmarshal([]byte(`{"key":"YQ==","sort_order":"DESCEND","sort_target":2,"limit":"1"}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.SortOrder != SortDescend || r.SortTarget != SortByCreate || r.Limit != 1 {
		t.Fatalf("decoded %+v", r)
	}
	if err := json.Unmarshal([]byte(`{"sort_order":"SIDEWAYS"}`), &r); err == nil {
		t.Fatal("an unknown enum name decoded")
	}
	c := &Compare{Target: CompareCreate, Result: CompareNotEqual, Key: b("k"), CreateRevision: 3}
	if got := asJSON(c); got != `{"result":"NOT_EQUAL","target":"CREATE","key":"aw==","create_revision":"3"}` {
		t.Fatalf("encoded %s", got)
	}
}
