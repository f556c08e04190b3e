package realredis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/etcdnode"
)

// naiveEtcd is a lock straight over etcdnode.Conn, with no etcd client: a
// lease, and a key created only if absent; it waits by polling. It tests
// the coordinator's etcd side from this module (the etcdv3 module runs
// etcd's own client over it).
type naiveEtcd struct {
	c     *EtcdClient
	lease int64
}

func (l *naiveEtcd) Lock(ctx context.Context) (time.Time, error) {
	g, err := l.c.Conn.Call(ctx, &etcdnode.LeaseGrantRequest{TTL: int64(l.c.TTL / time.Second)})
	if err != nil {
		return time.Time{}, err
	}
	l.lease = g.(*etcdnode.LeaseGrantResponse).ID
	key := []byte("naive-lock")
	for ctx.Err() == nil {
		r, err := l.c.Conn.Call(ctx, &etcdnode.TxnRequest{
			Compare: []*etcdnode.Compare{{Target: etcdnode.CompareCreate, Key: key}},
			Success: []*etcdnode.RequestOp{{RequestPut: &etcdnode.PutRequest{Key: key, Lease: l.lease}}}})
		if err != nil {
			return time.Time{}, err
		}
		if r.(*etcdnode.TxnResponse).Succeeded {
			return time.Now().Add(l.c.TTL / 2), nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return time.Time{}, ctx.Err()
}

func (l *naiveEtcd) Unlock(ctx context.Context) error {
	_, err := l.c.Conn.Call(ctx, &etcdnode.LeaseRevokeRequest{ID: l.lease})
	return err
}

func naiveEtcdLock() Lock {
	return Lock{Name: "naive-etcd", NewEtcd: func(c *EtcdClient) Locker { return &naiveEtcd{c: c} }}
}

// An etcd lock runs through the coordinator: it is granted, and each seed,
// under every fault class, is the same run twice.
func TestEtcdLockThroughTheCoordinator(t *testing.T) {
	cfg := EtcdDefaultConfig()
	shape := sim.ShapeOf(cfg)
	all, _ := faults.ParseClasses("all")
	for seed := uint64(1); seed <= 20; seed++ {
		plan := faults.Plan{}
		if seed > 1 {
			plan = Fit(faults.SwarmWithin(seed, all, shape, faults.Bounds{}))
		}
		sc := Scenario{Config: cfg, Lock: naiveEtcdLock(), Seed: seed, Plan: plan}
		if _, err := CheckDeterminism(t, sc); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if seed == 1 {
			res, err := RunTest(t, sc)
			if err != nil {
				t.Fatal(err)
			}
			grants := 0
			for _, e := range res.History.Events {
				if e.Kind == model.AcquireReturn && e.Granted {
					grants++
				}
			}
			if v := model.Check(res.History, model.DefaultCheckOptions()); grants < 10 || len(v.Violations) > 0 || res.Requests == 0 {
				t.Fatalf("no faults: %d grants, %d requests, violations %+v", grants, res.Requests, v.Violations)
			}
		}
	}
}

// An etcd lock needs one member, and one constructor.
func TestEtcdLockIsRefusedAWrongWorld(t *testing.T) {
	cfg := EtcdDefaultConfig()
	cfg.Nodes, cfg.Replication = 3, 3
	if _, err := RunTest(t, Scenario{Config: cfg, Lock: naiveEtcdLock(), Seed: 1}); err == nil {
		t.Fatal("an etcd lock ran against three nodes")
	}
	both := naiveEtcdLock()
	both.New = func(*Client) Locker { return nil }
	if _, err := RunTest(t, Scenario{Config: EtcdDefaultConfig(), Lock: both, Seed: 1}); err == nil {
		t.Fatal("a lock with two constructors ran")
	}
}

// fencedNaive is naiveEtcd that believes it holds until it releases, and
// gives its key's create revision as a fencing token.
type fencedNaive struct {
	naiveEtcd
	rev int64
}

func (l *fencedNaive) Lock(ctx context.Context) (time.Time, error) {
	_, err := l.naiveEtcd.Lock(ctx)
	if err != nil {
		return time.Time{}, err
	}
	r, err := l.c.Conn.Call(ctx, &etcdnode.RangeRequest{Key: []byte("naive-lock")})
	if err != nil {
		return time.Time{}, err
	}
	if kvs := r.(*etcdnode.RangeResponse).Kvs; len(kvs) > 0 {
		l.rev = kvs[0].CreateRevision
	}
	return time.Time{}, nil
}

func (l *fencedNaive) FencingToken() uint64 { return uint64(l.rev) }

// With fencing, the resource refuses a holder that outlived its lease: a
// 30-second pause at every fault point gives two holders whose read and
// write interleave. Without fencing that loses an update; with it, the
// paused holder's write is refused and the counter is whole, though two
// clients still held the lock at once. A fenced lock with no token is an
// error, not a silent unfenced run.
func TestFencingKeepsTheResourceSafeWhereTheLockIsNot(t *testing.T) {
	cfg := EtcdDefaultConfig()
	cfg.Duration = 90 * time.Second
	lock := Lock{Name: "fenced-naive", NewEtcd: func(c *EtcdClient) Locker { return &fencedNaive{naiveEtcd: naiveEtcd{c: c}} }}
	plan := faults.Plan{Points: faults.Points{PausePPM: 1_000_000, PauseFor: 30 * time.Second}}
	kinds := func(fenced bool) (map[model.ViolationKind]bool, int) {
		l := lock
		l.Envelope.Safety.ResourceChecksTokens = fenced
		res, err := RunTest(t, Scenario{Config: cfg, Lock: l, Seed: 1, Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		if res.History.Fenced != fenced {
			t.Fatalf("history fenced %v, want %v", res.History.Fenced, fenced)
		}
		refused := 0
		for _, e := range res.History.Events {
			if e.Kind == model.ResourceWrite && !e.Accepted {
				refused++
			}
			if e.Kind == model.AcquireReturn && e.Granted && e.HasToken != fenced {
				t.Fatalf("grant %+v: has_token %v in a world fenced %v", e, e.HasToken, fenced)
			}
		}
		got := map[model.ViolationKind]bool{}
		for _, v := range model.Check(res.History, model.DefaultCheckOptions()).Violations {
			got[v.Kind] = true
		}
		return got, refused
	}
	plain, refused := kinds(false)
	if !plain[model.MutualExclusion] || !plain[model.LostUpdate] || refused != 0 {
		t.Fatalf("unfenced: violations %v, %d writes refused; want two holders and a lost update", plain, refused)
	}
	fenced, refused := kinds(true)
	if !fenced[model.MutualExclusion] || fenced[model.LostUpdate] || refused == 0 {
		t.Fatalf("fenced: violations %v, %d writes refused; want two holders, no lost update, refused writes", fenced, refused)
	}
	tokenless := naiveEtcdLock()
	tokenless.Envelope.Safety.ResourceChecksTokens = true
	_, err := RunTest(t, Scenario{Config: cfg, Lock: tokenless, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "FencingToken") {
		t.Fatalf("a fenced envelope over a Locker without a token: err %v", err)
	}
}

// A connection the member refuses (it is down) is a failed attempt: the
// next waits out gRPC's reconnect backoff (1 s, growing 1.6 times, with
// 20% jitter), so over a 40-second crash each client tries a handful of
// times, not once per call its lock makes.
func TestRefusedConnectionsBackOff(t *testing.T) {
	cfg := EtcdDefaultConfig()
	cfg.Duration = 60 * time.Second
	sc := Scenario{Config: cfg, Lock: naiveEtcdLock(), Seed: 3, Trace: true,
		Plan: faults.Plan{Events: []faults.Event{{At: 10 * time.Second, Kind: faults.Crash, Node: 0, For: 40 * time.Second}}}}
	_, tr := traced(t, sc)
	refused := map[string][]string{}
	for _, line := range strings.Split(tr, "\n") {
		if strings.Contains(line, "fails: member down") {
			who := strings.Fields(line)[1]
			refused[who] = append(refused[who], line)
		}
	}
	if len(refused) == 0 {
		t.Fatalf("no connection was refused during the crash:\n%s", tr)
	}
	for who, lines := range refused {
		// Backoff sums 1, 1.6, 2.6, 4.1, 6.6, 10.5, 16.8 s (-20%): at most
		// eight attempts fit in 40 s.
		if len(lines) > 8 {
			t.Errorf("%s's connection was refused %d times in a 40 s crash, want at most 8:\n%s", strings.TrimSuffix(who, "'s"), len(lines), strings.Join(lines, "\n"))
		}
	}
}
