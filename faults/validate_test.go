package faults

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// goodPlan uses every field of the plan validly in defaultShape.
func goodPlan() Plan {
	return Plan{
		Network:        Network{LossPPM: 1000, DuplicatePPM: 10, ReplyLossPPM: Million, ExtraLatencyMax: time.Second},
		Clocks:         []Clock{{Kind: NodeProcess, Index: 4, Offset: -time.Minute}, {Kind: HostProcess, Index: 2, DriftPPM: 500}},
		ThreadsPerHost: 2,
		Points:         Points{PausePPM: 5000, PauseFor: time.Minute},
		Events: []Event{
			{At: 0, Kind: Crash, Node: 1},
			{At: time.Second, Kind: Crash, Node: 2, For: time.Second, Wipe: true},
			{At: time.Second, Kind: Partition, Nodes: []int{0, 1}, Hosts: []int{2}, For: time.Minute, OneWay: true},
			{At: 2 * time.Second, Kind: Partition, Hosts: []int{0}, For: time.Minute},
			{At: 3 * time.Second, Kind: Clog, Node: 4, For: time.Second},
			{At: 4 * time.Second, Kind: ClockJump, Target: HostProcess, Index: 2, Delta: -time.Minute},
			{At: 5 * time.Second, Kind: Pause, Client: 5, For: 90 * time.Second}, // 3 hosts × 2 threads
			{At: 6 * time.Second, Kind: Topology, Nodes: []int{4, 0, 2}},
		},
	}
}

func TestValidateAcceptsGoodPlan(t *testing.T) {
	if err := goodPlan().Validate(defaultShape); err != nil {
		t.Fatal(err)
	}
	if err := (Plan{}).Validate(defaultShape); err != nil {
		t.Fatalf("zero plan: %v", err)
	}
}

// TestValidateRejects is the list of mistakes Validate catches, each with
// the field its error must name.
func TestValidateRejects(t *testing.T) {
	ev := func(i int, f func(*Event)) func(*Plan) { return func(p *Plan) { f(&p.Events[i]) } }
	cases := []struct {
		name  string
		spoil func(*Plan)
		want  string
	}{
		{"loss above one", func(p *Plan) { p.Network.LossPPM = 2_000_000 }, "network.loss_ppm 2000000 exceeds 1000000"},
		{"dup above one", func(p *Plan) { p.Network.DuplicatePPM = Million + 1 }, "network.duplicate_ppm"},
		{"reply loss above one", func(p *Plan) { p.Network.ReplyLossPPM = Million + 1 }, "network.reply_loss_ppm"},
		{"negative latency", func(p *Plan) { p.Network.ExtraLatencyMax = -1 }, "network.extra_latency_max -1ns must not be negative"},
		{"clock kind", func(p *Plan) { p.Clocks[0].Kind = "client" }, `clocks[0].kind "client" unknown`},
		{"clock node index", func(p *Plan) { p.Clocks[0].Index = 5 }, "clocks[0].index 5 out of range (5 nodes)"},
		{"clock host index", func(p *Plan) { p.Clocks[1].Index = -1 }, "clocks[1].index -1 out of range (3 hosts)"},
		{"clock twice", func(p *Plan) { p.Clocks[1] = p.Clocks[0] }, "clocks[1] sets node 4's clock again"},
		{"clock stops", func(p *Plan) { p.Clocks[1].DriftPPM = -1_000_000 }, "clocks[1].drift_ppm"},
		{"threads negative", func(p *Plan) { p.ThreadsPerHost = -1 }, "threads_per_host -1 must not be negative"},
		{"points above one", func(p *Plan) { p.Points.PausePPM = Million + 1 }, "points.pause_ppm"},
		{"points negative", func(p *Plan) { p.Points.PauseFor = -time.Second }, "points.pause_for -1s"},
		{"points without duration", func(p *Plan) { p.Points.PauseFor = 0 }, "points.pause_for must be positive"},
		{"unsorted", ev(1, func(e *Event) { e.At = time.Minute }), "events[2].at 1s is before events[1].at 1m0s"},
		{"negative at", ev(0, func(e *Event) { e.At = -1 }), "events[0].at -1ns must not be negative"},
		{"after the end", ev(7, func(e *Event) { e.At = 10 * time.Minute }), "events[7].at 10m0s is not before the end"},
		{"unknown kind", ev(3, func(e *Event) { e.Kind = "meteor" }), `events[3].kind "meteor" unknown`},
		{"crash node", ev(0, func(e *Event) { e.Node = 7 }), "events[0].node 7 out of range (5 nodes)"},
		{"crash negative for", ev(0, func(e *Event) { e.For = -1 }), "events[0].for -1ns must not be negative"},
		{"wipe forever", ev(1, func(e *Event) { e.For = 0 }), "events[1].for 0s must be positive"},
		{"crash unused client", ev(0, func(e *Event) { e.Client = 1 }), "events[0].client is set but a crash event does not use it"},
		{"partition of nothing", ev(3, func(e *Event) { e.Hosts = nil }), "events[3] partition names no nodes and no hosts"},
		{"partition node", ev(2, func(e *Event) { e.Nodes = []int{0, 5} }), "events[2].nodes[1] 5 out of range (5 nodes)"},
		{"partition dup host", ev(2, func(e *Event) { e.Hosts = []int{2, 2} }), "events[2].hosts[1] 2 repeats events[2].hosts[0]"},
		{"partition forever", ev(2, func(e *Event) { e.For = 0 }), "events[2].for 0s must be positive"},
		{"partition unused delta", ev(2, func(e *Event) { e.Delta = 1 }), "events[2].delta is set"},
		{"clog node", ev(4, func(e *Event) { e.Node = -1 }), "events[4].node -1 out of range"},
		{"clog no time", ev(4, func(e *Event) { e.For = 0 }), "events[4].for"},
		{"clog unused wipe", ev(4, func(e *Event) { e.Wipe = true }), "events[4].wipe is set"},
		{"jump target", ev(5, func(e *Event) { e.Target = "" }), `events[5].target "" unknown`},
		{"jump index", ev(5, func(e *Event) { e.Index = 3 }), "events[5].index 3 out of range (3 hosts)"},
		{"jump by nothing", ev(5, func(e *Event) { e.Delta = 0 }), "events[5].delta must not be zero"},
		{"jump unused for", ev(5, func(e *Event) { e.For = 1 }), "events[5].for is set"},
		{"pause client", ev(6, func(e *Event) { e.Client = 6 }), "events[6].client 6 out of range (6 clients)"},
		{"pause forever", ev(6, func(e *Event) { e.For = 0 }), "events[6].for"},
		{"pause unused node", ev(6, func(e *Event) { e.Node = 1 }), "events[6].node is set"},
		{"topology empty", ev(7, func(e *Event) { e.Nodes = nil }), "events[7].nodes must name at least one node"},
		{"topology duplicate", ev(7, func(e *Event) { e.Nodes = []int{1, 3, 1} }), "events[7].nodes[2] 1 repeats"},
		{"topology node", ev(7, func(e *Event) { e.Nodes = []int{9} }), "events[7].nodes[0] 9 out of range"},
		{"topology unused one_way", ev(7, func(e *Event) { e.OneWay = true }), "events[7].one_way is set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := goodPlan()
			tc.spoil(&p)
			err := p.Validate(defaultShape)
			if err == nil {
				t.Fatalf("Validate accepted the plan; want %q", tc.want)
			}
			var pe *PlanError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "plan: ") {
				t.Errorf("error %v is not a *PlanError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestPauseClientsFollowThreadsOverride(t *testing.T) {
	p := Plan{Events: []Event{{Kind: Pause, Client: 3, For: 1}}} // 3 configured clients
	if err := p.Validate(defaultShape); err == nil || !strings.Contains(err.Error(), "(3 clients)") {
		t.Errorf("without override: %v", err)
	}
	p.ThreadsPerHost = 2
	if err := p.Validate(defaultShape); err != nil {
		t.Errorf("with 2 threads on 3 hosts: %v", err)
	}
}

func TestShapeValidate(t *testing.T) {
	for _, s := range testShapes {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	bad := []struct {
		spoil func(*Shape)
		want  string
	}{
		{func(s *Shape) { s.Nodes = 0 }, "nodes"},
		{func(s *Shape) { s.Replication = 6 }, "replication"},
		{func(s *Shape) { s.Hosts = 0 }, "hosts"},
		{func(s *Shape) { s.Clients = 0 }, "clients"},
		{func(s *Shape) { s.Duration = 0 }, "duration"},
	}
	for _, tc := range bad {
		s := defaultShape
		tc.spoil(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("shape %+v: error %v should name %s", s, err, tc.want)
		}
	}
}

func TestPausePointValidation(t *testing.T) {
	s := defaultShape
	ok := Plan{Events: []Event{{At: time.Second, Kind: Pause, Client: 0, For: time.Second, Point: InAcquire}}}
	if err := ok.Validate(s); err != nil {
		t.Fatalf("an in-acquire pause: %v", err)
	}
	for name, e := range map[string]Event{
		"another point":             {At: time.Second, Kind: Pause, Client: 0, For: time.Second, Point: AfterGrant},
		"a pause's point on a move": {At: time.Second, Kind: Topology, Nodes: []int{1}, Point: InAcquire},
		"a point on a crash":        {At: time.Second, Kind: Crash, Node: 0, For: time.Second, Point: InAcquire},
	} {
		err := Plan{Events: []Event{e}}.Validate(s)
		if err == nil || !strings.Contains(err.Error(), "events[0].point") {
			t.Errorf("%s: want an error naming events[0].point, got %v", name, err)
		}
	}
}
