package sim

import (
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// reachableAt reports whether client c could make progress at true time t.
func reachableAt(h model.History, c int, t time.Duration) bool {
	for _, r := range h.Reach {
		if r.Client == c && r.From <= int64(t) && int64(t) < r.To {
			return true
		}
	}
	return false
}

// Reach follows the faults: a majority of the key's nodes down, a
// partition cutting a host off, a client's own pause; and it returns
// when they end.
func TestReachFollowsTheFaults(t *testing.T) {
	s := time.Second
	plan := faults.Plan{Events: []faults.Event{
		{At: 10 * s, Kind: faults.Crash, Node: 0, For: 10 * s},
		{At: 10 * s, Kind: faults.Crash, Node: 1, For: 10 * s},
		{At: 30 * s, Kind: faults.Partition, Hosts: []int{1}, For: 10 * s},
		{At: 50 * s, Kind: faults.Pause, Client: 2, For: 10 * s},
		{At: 70 * s, Kind: faults.Crash, Node: 2, For: 10 * s}, // one of three: a majority is left
	}}
	h := faultRun(t, plan).History
	if !h.Reachable {
		t.Fatal("Reach not recorded")
	}
	cases := []struct {
		client int
		at     time.Duration
		want   bool
	}{
		{0, 5 * s, true}, {0, 15 * s, false}, {2, 15 * s, false}, {0, 25 * s, true},
		{1, 35 * s, false}, {0, 35 * s, true}, {1, 45 * s, true},
		{2, 55 * s, false}, {1, 55 * s, true},
		{0, 75 * s, true},
	}
	for _, c := range cases {
		if got := reachableAt(h, c.client, c.at); got != c.want {
			t.Errorf("client %d at %s: reachable %v, want %v (reach %+v)", c.client, c.at, got, c.want, h.Reach)
		}
	}
}

// A network whose round trips can outlast the RPC timeout is a lossy
// one, reachable (a late reply is a lost one, and the envelope says how
// much loss a lock needs bounded); a network in which no round trip can
// come back in time is never reachable. The first was once unreachable
// too, and a lock that never granted passed there.
func TestReachUnreliableNetwork(t *testing.T) {
	h := faultRun(t, faults.Plan{Network: faults.Network{ExtraLatencyMax: time.Second}}).History
	if len(h.Reach) == 0 || h.Healed == h.End {
		t.Errorf("a network whose round trips are late only sometimes was never reachable or never healed: healed %d, reach %+v", h.Healed, h.Reach)
	}
	cfg := smallConfig()
	cfg.LatencyMin, cfg.LatencyMax = cfg.RPCTimeout, cfg.RPCTimeout
	res, err := Run(Scenario{Config: cfg, Variant: ttlVariant, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.History; len(h.Reach) != 0 || h.Healed != h.End {
		t.Errorf("a network slower than the timeout on every round trip was reachable: healed %d, reach %+v", h.Healed, h.Reach)
	}
}

// leaseLock creates its key with a lease on the first node and never
// deletes it: the lease's expiry is all that frees the lock.
type leaseLock struct{}

func (leaseLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	s := env.Topology(key)[0]
	id, err := s.LeaseGrant(env.TTL())
	if err != nil {
		return algorithm.Grant{}
	}
	if _, err := s.CreateWithLease(key+"/"+env.ClientName(), env.ClientName(), id); err != nil {
		return algorithm.Grant{}
	}
	return algorithm.Grant{Granted: true, Owner: env.ClientName()}
}

func (leaseLock) Release(algorithm.Env, string, algorithm.Grant) {}

// A key attached to a lease is gone when its lease runs out, though the
// store removes it only at its node's next request: with no request after
// it (the client stops), it is no long-lived leftover.
func TestLeaseKeysGoWithTheirLease(t *testing.T) {
	c := smallConfig()
	c.Hosts, c.ThreadsPerHost, c.Acquisitions = 1, 1, 1
	c.Duration = 20 * c.TTL
	v := algorithm.Variant{Name: "lease", New: func() algorithm.Lock { return leaseLock{} }}
	res, err := Run(Scenario{Config: c, Variant: v, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for _, e := range res.History.Events {
		if e.Kind == model.AcquireReturn && e.Granted {
			granted++
		}
	}
	if granted != 1 {
		t.Fatalf("%d grants, want the one", granted)
	}
	if len(res.History.LongItems) > 0 {
		t.Fatalf("a key whose lease ran out after one TTL counts as a leftover: %+v", res.History.LongItems)
	}
}

// Recording every item's stays (Scenario.Items) changes nothing of the
// run: the same trace hash, the same long stays; and the long stays are
// among the stays recorded.
func TestItemsRecordedWithoutChangingTheRun(t *testing.T) {
	s := time.Second
	plan := faults.Plan{Network: faults.Network{LossPPM: 50_000}, Events: []faults.Event{
		{At: 10 * s, Kind: faults.Crash, Node: 0, For: 10 * s},
		{At: 30 * s, Kind: faults.Pause, Client: 1, For: 90 * s},
	}}
	run := func(items bool) Result {
		res, err := Run(Scenario{Config: smallConfig(), Variant: ttlVariant, Seed: 11, Plan: plan, Items: items})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	off, on := run(false), run(true)
	if off.TraceHash != on.TraceHash || len(off.History.Items) != 0 {
		t.Fatalf("recording items changed the run: hash %x vs %x, %d items recorded when off",
			off.TraceHash, on.TraceHash, len(off.History.Items))
	}
	if len(on.History.Items) == 0 {
		t.Fatal("no item recorded")
	}
	if len(on.History.LongItems) != len(off.History.LongItems) {
		t.Fatalf("long stays differ: %d with items, %d without", len(on.History.LongItems), len(off.History.LongItems))
	}
	for _, long := range on.History.LongItems {
		found := false
		for _, it := range on.History.Items {
			found = found || (it.Node == long.Node && it.Owner == long.Owner && it.From == long.From && it.To == long.To)
		}
		if !found {
			t.Errorf("long stay %+v is not among the items recorded", long)
		}
	}
}

// The application's data is no lock item: a run that leaves it where it
// was leaves no lock item behind (it once read "lock items left: n0 held
// by h0", the host that wrote the data).
func TestApplicationDataIsNoLeftover(t *testing.T) {
	cfg := smallConfig()
	cfg.AppData = AppDataLockName
	res, err := Run(Scenario{Config: cfg, Variant: ttlVariant, Seed: 3, Items: true})
	if err != nil {
		t.Fatal(err)
	}
	h := res.History
	if len(h.DataLoss) != 0 || len(h.AppData) != 2 {
		t.Fatalf("want the data under k and k_lock kept, got data %v, lost %v", h.AppData, h.DataLoss)
	}
	if len(h.Leftovers) != 0 {
		t.Fatalf("the application's data counted as lock items left: %v", h.Leftovers)
	}
	app := 0
	for _, it := range h.Items {
		if it.App {
			app++
		}
	}
	if app == 0 {
		t.Fatal("the application's data is not among the stays recorded, for ExplainWait to name")
	}
}
