package etcdnode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The differential test sends the same requests to a real etcd, through its
// JSON gateway, and to a Member, and compares the answers, all but the
// cluster and member IDs and the raft term, with lease IDs the member chose
// mapped to etcd's. It is the only place in the package that reads the wall
// clock: the member's now is the time since the test began, so that lease
// TTLs agree with the server's; no lease is short enough to expire during
// the test, since the real etcd would revoke it on its own.
//
// The real server is Debian's etcd 3.4.23. Where 3.4 differs from the 3.6
// the member follows, the requests avoid the difference: 3.4 does not refuse
// unknown sort options nor a watch from a negative revision, it answers a
// progress request on a stream without watches, and it checks a
// txn's puts before its ranges, so txn ranges never ask for a future
// revision here.

// diffStep is one request sent to both.
type diffStep struct {
	name   string
	path   string                                                     // the gateway's, e.g. "/v3/kv/put"
	req    any                                                        // JSON body
	member func(m *Member, now int64) (any, error)                    // the same request to the member
	near   bool                                                       // TTL may differ by a second (time to live)
	watch  func(m *Member, now int64, stream uint64) []*WatchResponse // set for a watch: path is /v3/watch
}

func kvStep(name string, r any) diffStep {
	s := diffStep{name: name, req: r}
	switch r := r.(type) {
	case *RangeRequest:
		s.path, s.member = "/v3/kv/range", func(m *Member, now int64) (any, error) { return m.Range(now, r) }
	case *PutRequest:
		s.path, s.member = "/v3/kv/put", func(m *Member, now int64) (any, error) { return m.Put(now, r) }
	case *DeleteRangeRequest:
		s.path, s.member = "/v3/kv/deleterange", func(m *Member, now int64) (any, error) { return m.DeleteRange(now, r) }
	case *TxnRequest:
		s.path, s.member = "/v3/kv/txn", func(m *Member, now int64) (any, error) { return m.Txn(now, r) }
	default:
		panic(fmt.Sprintf("kvStep: %T", r))
	}
	return s
}

func leaseStep(name string, r any) diffStep {
	s := diffStep{name: name, req: r}
	switch r := r.(type) {
	case *LeaseGrantRequest:
		s.path, s.member = "/v3/lease/grant", func(m *Member, now int64) (any, error) { return m.LeaseGrant(now, r) }
	case *LeaseRevokeRequest:
		s.path, s.member = "/v3/lease/revoke", func(m *Member, now int64) (any, error) { return m.LeaseRevoke(now, r) }
	case *LeaseTimeToLiveRequest:
		s.path, s.near = "/v3/lease/timetolive", true
		s.member = func(m *Member, now int64) (any, error) { return m.LeaseTimeToLive(now, r) }
	case *LeaseLeasesRequest:
		s.path, s.member = "/v3/lease/leases", func(m *Member, now int64) (any, error) { return m.LeaseLeases(now, r) }
	case *LeaseKeepAliveRequest: // a stream: one request, one answer
		s.path = "/v3/lease/keepalive"
		s.member = func(m *Member, now int64) (any, error) {
			resp, ok := m.LeaseKeepAlive(now, 1, r)
			if !ok {
				return nil, fmt.Errorf("keep-alive waits for a revocation")
			}
			return resp, nil
		}
	default:
		panic(fmt.Sprintf("leaseStep: %T", r))
	}
	return s
}

// watchMsg is one message up a watch stream (etcdserverpb.WatchRequest).
type watchMsg struct {
	Create   *WatchCreateRequest `json:"create_request,omitempty"`
	Cancel   *watchCancel        `json:"cancel_request,omitempty"`
	Progress *struct{}           `json:"progress_request,omitempty"`
}

type watchCancel struct {
	WatchId int64 `json:"watch_id,string"`
}

// watchStep sends msgs up one new watch stream. etcd sends a created or
// canceled answer at once but history within 100 ms, after later answers,
// so a stream with more than one message watches only from now.
func watchStep(name string, msgs ...watchMsg) diffStep {
	var body strings.Builder
	for _, msg := range msgs {
		body.WriteString(asJSON(msg) + "\n")
	}
	return diffStep{name: name, path: "/v3/watch", req: body.String(),
		watch: func(m *Member, now int64, stream uint64) []*WatchResponse {
			var out []*WatchResponse
			for _, msg := range msgs {
				switch {
				case msg.Create != nil:
					out = append(out, m.Watch(now, stream, msg.Create)...)
				case msg.Cancel != nil:
					out = append(out, m.CancelWatch(now, stream, msg.Cancel.WatchId))
				default:
					out = append(out, m.RequestProgress(now, stream))
				}
			}
			return slices.DeleteFunc(out, func(r *WatchResponse) bool { return r == nil })
		}}
}

func TestDifferentialAgainstEtcd(t *testing.T) {
	e := startEtcd(t)
	m := New(Options{})
	d := &differ{t: t, e: e, m: m, start: time.Now(), leaseIDs: map[string]string{}}
	for _, s := range fixedSteps() {
		d.run(s)
	}
	rng := rand.New(rand.NewPCG(2026, 12))
	for i := range 400 {
		d.run(randomStep(rng, i, m.Revision()))
	}
	t.Logf("%d requests compared with etcd 3.4 (%d left out: etcd would panic)", d.compared, d.skipped)
}

type differ struct {
	t                 *testing.T
	e                 *etcdServer
	m                 *Member
	start             time.Time
	leaseIDs          map[string]string // member's chosen lease ID → etcd's, in decimal
	compared, skipped int
	streams           uint64
}

func (d *differ) now() int64 { return int64(time.Since(d.start)) }

func (d *differ) run(s diffStep) {
	d.t.Helper()
	if s.watch != nil {
		d.runWatch(s)
		return
	}
	got, gotErr := s.member(d.m, d.now())
	var e *Error
	if errorsAs(gotErr, &e) && e.Code == CodeUnknown {
		d.skipped++ // the txn etcd panics on (see Member.Unsupported)
		return
	}
	wantJSON, wantErr := d.e.call(d.t, s.path, s.req)
	d.compared++
	if gotErr != nil || wantErr != nil {
		if ge, _ := gotErr.(*Error); ge == nil || wantErr == nil || *ge != *wantErr {
			d.t.Errorf("%s %s:\nmember error %v\netcd error   %v", s.name, asJSON(s.req), gotErr, wantErr)
		}
		return
	}
	d.learnLeaseID(got, wantJSON)
	g, w := d.normalize([]byte(asJSON(got)), true), d.normalize(wantJSON, false)
	if s.near {
		nearTTL(g, w)
	}
	if asJSON(g) != asJSON(w) {
		d.t.Errorf("%s %s:\nmember %s\netcd   %s", s.name, asJSON(s.req), asJSON(g), asJSON(w))
	}
}

func errorsAs(err error, target **Error) bool {
	e, ok := err.(*Error)
	*target = e
	return ok
}

// learnLeaseID maps the ID the member chose in a grant to etcd's.
func (d *differ) learnLeaseID(got any, wantJSON []byte) {
	g, ok := got.(*LeaseGrantResponse)
	if !ok {
		return
	}
	var w LeaseGrantResponse
	if err := json.Unmarshal(wantJSON, &w); err != nil {
		d.t.Fatalf("etcd's grant answer %s: %v", wantJSON, err)
	}
	d.leaseIDs[strconv.FormatInt(g.ID, 10)] = strconv.FormatInt(w.ID, 10)
}

// normalize decodes an answer and drops what the two cannot share: the
// cluster and member IDs, the raft term; the member's lease IDs become etcd's.
func (d *differ) normalize(data []byte, member bool) any {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		d.t.Fatalf("decode %s: %v", data, err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch {
				case k == "cluster_id" || k == "member_id" || k == "raft_term":
					delete(v, k)
				case member && (k == "ID" || k == "lease") && d.leaseIDs[fmt.Sprint(x)] != "":
					v[k] = d.leaseIDs[fmt.Sprint(x)]
				case k == "keys":
					slices.SortFunc(x.([]any), func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
				default:
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return v
}

// nearTTL lets a time to live's TTL differ by one second: the two clocks
// are read moments apart.
func nearTTL(g, w any) {
	gm, ok1 := g.(map[string]any)
	wm, ok2 := w.(map[string]any)
	if !ok1 || !ok2 {
		return
	}
	gt, _ := strconv.ParseInt(fmt.Sprint(gm["TTL"]), 10, 64)
	wt, _ := strconv.ParseInt(fmt.Sprint(wm["TTL"]), 10, 64)
	if gt-wt <= 1 && wt-gt <= 1 {
		gm["TTL"] = wm["TTL"]
	}
}

// runWatch opens a watch on both and compares what each sends at once.
func (d *differ) runWatch(s diffStep) {
	d.t.Helper()
	d.streams++ // each gateway request is a stream of its own
	got := s.watch(d.m, d.now(), d.streams)
	want := d.e.stream(d.t, s.path, s.req.(string), len(got))
	d.compared++
	if len(want) != len(got) {
		d.t.Errorf("%s: member sent %d messages, etcd %d: %s", s.name, len(got), len(want), want)
		return
	}
	for i := range got {
		g, w := d.normalize([]byte(asJSON(got[i])), true), d.normalize(want[i], false)
		if asJSON(g) != asJSON(w) {
			d.t.Errorf("%s message %d:\nmember %s\netcd   %s", s.name, i, asJSON(g), asJSON(w))
		}
	}
}

// randomStep draws request i of a seeded sequence; rev is the member's
// current revision.
func randomStep(rng *rand.Rand, i int, rev int64) diffStep {
	seed := int(rng.Int64())
	name := fmt.Sprintf("random %d", i)
	switch k := rng.IntN(20); {
	case k < 5:
		return kvStep(name, genPut().Example(seed))
	case k < 7:
		return kvStep(name, genDelete().Example(seed))
	case k < 11:
		return kvStep(name, genRange(rev+2).Example(seed))
	case k < 16:
		return kvStep(name, genTxn(rev, 2).Example(seed))
	case k == 16:
		return leaseStep(name, &LeaseGrantRequest{ID: rng.Int64N(3) + 1, TTL: []int64{100, 300, MaxLeaseTTLSeconds + 1}[rng.IntN(3)]})
	case k == 17:
		return leaseStep(name, &LeaseRevokeRequest{ID: rng.Int64N(4) + 1})
	case k == 18:
		return leaseStep(name, &LeaseTimeToLiveRequest{ID: rng.Int64N(4) + 1, Keys: rng.IntN(2) == 0})
	}
	return watchStep(name, watchMsg{Create: rapid.Custom(func(t *rapid.T) *WatchCreateRequest {
		return &WatchCreateRequest{Key: b(genKey.Draw(t, "key")), RangeEnd: b(genEnd.Draw(t, "end")),
			StartRevision: rapid.Int64Range(1, rev).Draw(t, "start"), PrevKv: rapid.Bool().Draw(t, "prev"),
			Filters: rapid.SliceOfN(rapid.SampledFrom([]FilterType{FilterNoPut, FilterNoDelete}), 0, 1).Draw(t, "filters")}
	}).Example(seed)})
}

// etcdServer is an etcd child process on loopback ports, killed when the test ends.
type etcdServer struct {
	url    string
	client *http.Client
}

func startEtcd(t *testing.T) *etcdServer {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd not installed: apt-get install etcd-server; .ci/run installs it")
	}
	// A port found free can be taken before etcd binds it: try a few times,
	// and accept only a server that reports our member name.
	for range 3 {
		if s := tryEtcd(t, bin); s != nil {
			return s
		}
	}
	t.Fatal("could not start an etcd of our own")
	return nil
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func tryEtcd(t *testing.T, bin string) *etcdServer {
	port := freePort(t)
	client, peer := "http://127.0.0.1:"+port, "http://127.0.0.1:"+freePort(t)
	name := fmt.Sprintf("locksim-%d-%s", os.Getpid(), port)
	dir := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, _ = os.MkdirTemp("/dev/shm", "etcdnode-") // fsync in memory: fast
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	cmd := exec.Command(bin, "--name", name, "--data-dir", dir+"/data",
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", name+"="+peer, "--logger", "zap", "--log-level", "error")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("etcd output:\n%s", logs.String())
		}
	})
	s := &etcdServer{url: client, client: &http.Client{Timeout: 10 * time.Second}}
	for range 250 { // up to 10 s for the server to answer
		select {
		case <-exited:
			return nil
		default:
		}
		var members struct{ Members []struct{ Name string } }
		if data, err := s.call(t, "/v3/cluster/member/list", struct{}{}); err == nil {
			json.Unmarshal(data, &members)
			if len(members.Members) != 1 || members.Members[0].Name != name {
				return nil // someone else's etcd on that port
			}
			return s
		}
		time.Sleep(40 * time.Millisecond)
	}
	return nil
}

// call posts a request to the gateway and returns the answer's JSON, or the
// gRPC error the gateway reports.
func (s *etcdServer) call(t *testing.T, path string, req any) ([]byte, *Error) {
	t.Helper()
	resp, err := s.client.Post(s.url+path, "application/json", strings.NewReader(asJSON(req)))
	if err != nil {
		return nil, &Error{CodeUnknown, err.Error()} // not up yet, while starting
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if strings.HasSuffix(path, "/keepalive") {
		data = streamResult(t, data)
	}
	if resp.StatusCode != http.StatusOK {
		var gw struct {
			Code    uint32
			Message string
		}
		json.Unmarshal(data, &gw)
		return nil, &Error{gw.Code, gw.Message}
	}
	return data, nil
}

// streamResult unwraps one message of a streamed answer: {"result": ...}.
func streamResult(t *testing.T, data []byte) []byte {
	var msg struct {
		Result json.RawMessage
		Error  json.RawMessage
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &msg); err != nil || msg.Result == nil {
		t.Fatalf("stream answer %s: %v", data, err)
	}
	return msg.Result
}

// stream opens a streaming request and returns its first n messages, or as
// many as come within two seconds (etcd sends a watch's history within its
// 100 ms resync loop).
func (s *etcdServer) stream(t *testing.T, path string, req string, n int) []json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+path, strings.NewReader(req))
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	var out []json.RawMessage
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for len(out) < n {
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
		out = append(out, streamResult(t, raw))
	}
	return out
}
