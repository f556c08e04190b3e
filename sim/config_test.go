package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// Every field that makes no sense is named in the error, and Run refuses
// to start rather than simulate nonsense.
func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		field string
		bad   func(c *Config)
	}{
		{"nodes", func(c *Config) { c.Nodes = 0 }},
		{"nodes", func(c *Config) { c.Nodes, c.Replication = 65, 3 }},
		{"replication", func(c *Config) { c.Replication = 0 }},
		{"replication", func(c *Config) { c.Replication = c.Nodes + 1 }},
		{"hosts", func(c *Config) { c.Hosts = 0 }},
		{"hosts", func(c *Config) { c.Hosts = 65 }},
		{"threads_per_host", func(c *Config) { c.ThreadsPerHost = 0 }},
		{"ttl", func(c *Config) { c.TTL = 0 }},
		{"ttl", func(c *Config) { c.TTL = -time.Second }},
		{"duration", func(c *Config) { c.Duration = -time.Minute }},
		{"latency_min", func(c *Config) { c.LatencyMin = -time.Millisecond }},
		{"latency_max", func(c *Config) { c.LatencyMax = c.LatencyMin - 1 }},
		{"latency_tail", func(c *Config) { c.LatencyTail = -1 }},
		{"rpc_timeout", func(c *Config) { c.RPCTimeout = 0 }},
		{"hold_min", func(c *Config) { c.HoldMin = -1 }},
		{"hold_max", func(c *Config) { c.HoldMax = c.HoldMin - 1 }},
		{"think_min", func(c *Config) { c.ThinkMin = -1 }},
		{"think_max", func(c *Config) { c.ThinkMax = c.ThinkMin - 1 }},
		{"max_events", func(c *Config) { c.MaxEvents = 0 }},
		{"max_steps_no_yield", func(c *Config) { c.MaxStepsNoYield = -1 }},
	} {
		c := DefaultConfig()
		tc.bad(&c)
		_, err := Run(Scenario{Config: c, Variant: naive})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("config with bad %s: got %v, want a ConfigError naming %q", tc.field, err, tc.field)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("the default config must be valid: %v", err)
	}
}

// A bad plan is rejected before the run with a PlanError naming the field
// by its JSON path.
func TestBadPlansAreRejected(t *testing.T) {
	crash := func(e faults.Event) faults.Plan { return faults.Plan{Events: []faults.Event{e}} }
	for _, tc := range []struct {
		field string
		plan  faults.Plan
	}{
		{"network.loss_ppm", faults.Plan{Network: faults.Network{LossPPM: faults.Million + 1}}},
		{"network.duplicate_ppm", faults.Plan{Network: faults.Network{DuplicatePPM: 2 * faults.Million}}},
		{"network.reply_loss_ppm", faults.Plan{Network: faults.Network{ReplyLossPPM: faults.Million + 1}}},
		{"network.extra_latency_max", faults.Plan{Network: faults.Network{ExtraLatencyMax: -time.Millisecond}}},
		{"points.pause_ppm", faults.Plan{Points: faults.Points{PausePPM: faults.Million + 1, PauseFor: time.Second}}},
		{"clocks[0].drift_ppm", faults.Plan{Clocks: []faults.Clock{{Kind: faults.HostProcess, Index: 0, DriftPPM: -1_000_000}}}},
		{"clocks[0].index", faults.Plan{Clocks: []faults.Clock{{Kind: faults.NodeProcess, Index: 5}}}},
		{"threads_per_host", faults.Plan{ThreadsPerHost: -1}},
		{"events[0].node", crash(faults.Event{Kind: faults.Crash, Node: 5})},
		{"events[0].for", crash(faults.Event{Kind: faults.Crash, Node: 0, For: -time.Second})},
		{"events[0].at", crash(faults.Event{At: 11 * time.Minute, Kind: faults.Crash})},
		{"events[0].client", crash(faults.Event{Kind: faults.Pause, Client: 3, For: time.Second})},
		{"events[0].hosts[0]", crash(faults.Event{Kind: faults.Partition, Hosts: []int{3}, For: time.Second})},
		{"events[0].nodes", crash(faults.Event{Kind: faults.Topology})},
		{"events[0].kind", crash(faults.Event{Kind: "meteor"})},
		{"events[1].at", faults.Plan{Events: []faults.Event{
			{At: time.Minute, Kind: faults.Clog, Node: 0, For: time.Second},
			{At: time.Second, Kind: faults.Clog, Node: 0, For: time.Second}}}},
	} {
		_, err := Run(Scenario{Config: DefaultConfig(), Variant: naive, Plan: tc.plan})
		var pe *faults.PlanError
		if !errors.As(err, &pe) || pe.Field != tc.field {
			t.Errorf("plan with bad %s: got %v, want a PlanError naming %q", tc.field, err, tc.field)
		}
	}
}

// The plan's thread count is what pause events are checked against.
func TestPlanThreadsPerHostWidensClients(t *testing.T) {
	plan := faults.Plan{ThreadsPerHost: 2, Events: []faults.Event{{Kind: faults.Pause, Client: 5, For: time.Second}}}
	res, err := Run(Scenario{Config: smallConfig(), Variant: naive, Plan: plan, Seed: 1})
	if err != nil {
		t.Fatalf("client 5 exists with 3 hosts × 2 threads: %v", err)
	}
	if len(res.History.Clients) != 6 || res.History.Clients[5].Host != "h2" {
		t.Fatalf("clients %+v, want 6 with h2/t1 last", res.History.Clients)
	}
}

func TestVariantWithoutConstructorIsAnError(t *testing.T) {
	_, err := Run(Scenario{Config: DefaultConfig()})
	if err == nil || !strings.Contains(err.Error(), "constructor") {
		t.Fatalf("got %v, want an error about the missing constructor", err)
	}
}

// A client with Acquisitions set stops after that many grants, each
// released; without it clients go on until the run ends.
func TestAcquisitionsStopClients(t *testing.T) {
	c := smallConfig()
	c.Duration = 2 * time.Minute
	grants := func(c Config) []int {
		res, err := Run(Scenario{Config: c, Variant: ttlVariant, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		n := make([]int, len(res.History.Clients))
		for _, e := range res.History.Events {
			if e.Kind == model.AcquireReturn && e.Granted {
				n[e.Client]++
			}
		}
		return n
	}
	for _, n := range grants(c) {
		if n <= 2 {
			t.Fatalf("without Acquisitions a client had only %d grants in 2 minutes", n)
		}
	}
	c.Acquisitions = 2
	for i, n := range grants(c) {
		if n != 2 {
			t.Errorf("client %d had %d grants, want Acquisitions = 2", i, n)
		}
	}
	c.Acquisitions = -1
	if _, err := Run(Scenario{Config: c, Variant: ttlVariant}); err == nil || !strings.Contains(err.Error(), "acquisitions") {
		t.Errorf("negative acquisitions: %v", err)
	}
}
