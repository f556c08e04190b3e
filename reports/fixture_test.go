package reports

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports/ -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}

// sec is a true time in whole and thousandths of seconds.
func sec(s float64) int64 { return int64(s*1000) * int64(time.Millisecond) }

// pausedHolder is the original algorithm's classic failure, written by
// hand: h0/t0 is granted the lock (no token, no validity: it believes until
// it releases), pauses for longer than the TTL, h1/t0 is granted the lock
// after it expired on the node, and h0/t0 wakes up still believing it holds
// the lock and writes over h1/t0's update.
func pausedHolder() (model.History, faults.Plan, model.Verdict) {
	var seq uint64
	ev := func(t float64, c int, k model.Kind, f func(*model.Event)) model.Event {
		seq++
		e := model.Event{Seq: seq, Time: sec(t), Client: c, Kind: k}
		if f != nil {
			f(&e)
		}
		return e
	}
	granted := func(e *model.Event) { e.Granted = true }
	value := func(v int64, ok bool) func(*model.Event) {
		return func(e *model.Event) { e.Value, e.Accepted = v, ok }
	}
	reason := func(r string) func(*model.Event) { return func(e *model.Event) { e.Reason = r } }
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0", Host: "h0"}, {Name: "h1/t0", Host: "h1"}},
		Events: []model.Event{
			ev(1.000, 0, model.AcquireCall, nil),
			ev(1.012, 0, model.AcquireReturn, granted),
			ev(1.500, 1, model.AcquireCall, nil),
			ev(1.520, 1, model.AcquireReturn, nil),
			ev(2.000, 0, model.ResourceRead, value(0, true)),
			// h0/t0 pauses here (plan event at 2.5s) for 70s.
			ev(62.000, 1, model.AcquireCall, nil),
			ev(62.015, 1, model.AcquireReturn, granted),
			ev(62.100, 1, model.ResourceRead, value(0, true)),
			ev(62.200, 1, model.ResourceWrite, value(1, true)),
			ev(72.500, 0, model.ResourceWrite, value(1, true)),
			ev(72.600, 0, model.BeliefEnd, reason("release")),
			ev(72.600, 0, model.ReleaseCall, nil),
			ev(72.610, 0, model.ReleaseReturn, nil),
			ev(80.000, 1, model.BeliefEnd, reason("release")),
			ev(80.001, 1, model.ReleaseCall, nil),
			ev(80.020, 1, model.ReleaseReturn, nil),
			ev(90.000, 0, model.AcquireCall, nil),
			ev(90.000, 0, model.ClientStop, reason("run ended")),
		},
		End:        sec(90),
		Healed:     sec(72.5),
		TTL:        60 * time.Second,
		Messages:   42,
		FinalValue: 1,
		Leftovers:  []model.LockItem{{Node: "n1", Owner: "h0"}},
	}
	plan := faults.Plan{
		Network: faults.Network{LossPPM: 12_500},
		Clocks:  []faults.Clock{{Kind: faults.HostProcess, Index: 1, Offset: -2 * time.Second}},
		Events: []faults.Event{
			{At: 2500 * time.Millisecond, Kind: faults.Pause, Client: 0, For: 70 * time.Second},
			{At: 30 * time.Second, Kind: faults.Crash, Node: 1, For: 30 * time.Second, Wipe: true},
			{At: 40 * time.Second, Kind: faults.Partition, Nodes: []int{0}, Hosts: []int{1}, OneWay: true, For: 20 * time.Second},
			{At: 45 * time.Second, Kind: faults.ClockJump, Target: faults.HostProcess, Index: 0, Delta: 90 * time.Second},
			{At: 50 * time.Second, Kind: faults.Topology, Nodes: []int{3, 4, 0}},
		},
	}
	v := model.Verdict{
		Violations: []model.Violation{
			{Kind: model.MutualExclusion, Time: sec(62.015), Clients: []int{0, 1},
				Story: "h1/t0 was granted the lock at 62.015s while h0/t0, paused, still believed it held it"},
			{Kind: model.LostUpdate, Time: sec(72.5), Clients: []int{0, 1},
				Story: "h0/t0 wrote 1 over h1/t0's 1: one increment lost"},
		},
		Metrics: model.Metrics{Grants: 2, FailedAttempts: 1, AcquireP50: sec(0.012), AcquireP99: sec(0.015),
			Availability: 0.66, MessagesPerGrant: 21},
	}
	return h, plan, v
}
