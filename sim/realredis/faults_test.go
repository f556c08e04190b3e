package realredis

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

func oneNode(d time.Duration) Scenario {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Duration = 1, 1, d
	return Scenario{Config: cfg, Lock: naiveLock, Seed: 5, Trace: true}
}

func traced(t *testing.T, sc Scenario) (Result, string) {
	t.Helper()
	res := run(t, sc)
	var b strings.Builder
	for _, e := range res.Trace {
		b.WriteString(model.Seconds(e.Time) + " " + e.What + "\n")
	}
	return res, b.String()
}

// A crash resets the node's connections and refuses dials; the restart
// keeps the keys (crash) or loses them (amnesia).
func TestCrashResetsConnectionsAndRestartKeepsOrLosesData(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		sc := oneNode(30 * time.Second)
		sc.Plan.Events = []faults.Event{{At: 5 * time.Second, Kind: faults.Crash, Node: 0, For: 2 * time.Second, Wipe: wipe}}
		res, tr := traced(t, sc)
		for _, want := range []string{"n0 crashes", "connection reset: node crashed", "refused (down)", "n0 restarts"} {
			if !strings.Contains(tr, want) {
				t.Errorf("wipe %v: no %q in the trace:\n%s", wipe, want, tr)
			}
		}
		if len(res.History.Restarts) != 1 || res.History.Restarts[0].Empty != wipe || res.History.Restarts[0].Time != int64(7*time.Second) {
			t.Errorf("wipe %v: restarts %+v", wipe, res.History.Restarts)
		}
	}
}

// A node that does not answer (black hole) or a partition leaves dials
// unanswered and kills connections silently: the clients time out.
func TestBlackHoleAndPartitionAreSilent(t *testing.T) {
	for _, e := range []faults.Event{
		{At: 5 * time.Second, Kind: faults.Crash, Node: 0, For: 10 * time.Second, BlackHole: true},
		{At: 5 * time.Second, Kind: faults.Partition, Nodes: []int{0}, For: 10 * time.Second},
	} {
		sc := oneNode(30 * time.Second)
		sc.Plan.Events = []faults.Event{e}
		_, tr := traced(t, sc)
		if strings.Contains(tr, "connection reset") || !strings.Contains(tr, "no answer") {
			t.Errorf("%s: want dials unanswered and no reset:\n%s", e.Kind, tr)
		}
	}
}

// A lock whose envelope relies on restart quarantine gets Redlock's
// delayed restart: the node stays down one TTL more.
func TestQuarantineDelaysTheRestart(t *testing.T) {
	sc := oneNode(40 * time.Second)
	sc.Lock.Envelope = algorithm.Envelope{Safety: algorithm.Assumptions{RestartQuarantine: true}}
	sc.Plan.Events = []faults.Event{{At: 5 * time.Second, Kind: faults.Crash, Node: 0, For: 2 * time.Second, Wipe: true}}
	res, tr := traced(t, sc)
	if !strings.Contains(tr, "stays down for its quarantine") || len(res.History.Restarts) != 1 || res.History.Restarts[0].Time != int64(7*time.Second+sc.Config.TTL) {
		t.Fatalf("restarts %+v; trace:\n%s", res.History.Restarts, tr)
	}
	sc.Plan.Deployment.NoQuarantine = true
	res, _ = traced(t, sc)
	if res.History.Restarts[0].Time != int64(7*time.Second) {
		t.Fatalf("a lapsed quarantine still delayed the restart: %+v", res.History.Restarts)
	}
}

// A node clock that jumps forward expires the lock early: the naive lock,
// which trusts the TTL, then has two holders.
func TestANodeClockJumpExpiresKeysEarly(t *testing.T) {
	sc := oneNode(60 * time.Second)
	sc.Config.HoldMin, sc.Config.HoldMax = 3*time.Second, 3*time.Second
	sc.Plan.Events = []faults.Event{
		{At: 10 * time.Second, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 0, Delta: time.Minute},
		{At: 30 * time.Second, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 0, Delta: time.Minute},
		{At: 50 * time.Second, Kind: faults.ClockJump, Target: faults.NodeProcess, Index: 0, Delta: time.Minute},
	}
	res, _ := traced(t, sc)
	v := model.Check(res.History, model.DefaultCheckOptions())
	if _, ok := v.First(model.MutualExclusion); !ok {
		t.Fatalf("three forward jumps of the node's clock during 3 s holds gave no two holders: %s", v)
	}
}

// Replies lost after their request was applied: the write happened and
// the client does not know it; the connection is gone.
func TestAReplyLostAfterApplyKillsTheConnection(t *testing.T) {
	sc := oneNode(30 * time.Second)
	sc.Plan.Network.ReplyLossPPM = 200_000
	_, tr := traced(t, sc)
	if !strings.Contains(tr, "reply lost after apply") {
		t.Fatalf("no reply lost after apply at 20%%:\n%s", tr)
	}
}

// A timed pause holds the client's messages both ways until it ends; one
// that waits for a call inside Lock holds that call.
func TestPausesHoldTheClientsMessages(t *testing.T) {
	sc := oneNode(30 * time.Second)
	sc.Plan.Events = []faults.Event{
		{At: 5 * time.Second, Kind: faults.Pause, Client: 0, For: 10 * time.Second},
		{At: 5 * time.Second, Kind: faults.Pause, Client: 1, For: 3 * time.Second, Point: faults.InAcquire},
	}
	res, tr := traced(t, sc)
	if !strings.Contains(tr, "h0/t0 paused for 10s") || !strings.Contains(tr, "h1/t0 pauses 3.000s before SET") {
		t.Fatalf("pauses not in the trace:\n%s", tr)
	}
	for _, e := range res.Trace {
		if strings.HasPrefix(e.What, "n0 <- h0/t0") && e.Time > int64(5*time.Second) && e.Time < int64(15*time.Second) {
			t.Fatalf("h0/t0's request reached n0 during its pause: %s at %s", e.What, model.Seconds(e.Time))
		}
	}
}

// A crash that never ends heals nothing: liveness is not owed after it.
func TestACrashForGoodHealsNever(t *testing.T) {
	sc := oneNode(60 * time.Second)
	sc.Plan.Events = []faults.Event{{At: 10 * time.Second, Kind: faults.Crash, Node: 0}}
	res, _ := traced(t, sc)
	if res.History.Healed != res.History.End {
		t.Fatalf("healed at %s, the run ended at %s", model.Seconds(res.History.Healed), model.Seconds(res.History.End))
	}
	if v := model.Check(res.History, model.DefaultCheckOptions()); !v.OK() {
		t.Fatalf("a node down for good made the lock owe liveness: %s", v)
	}
}
