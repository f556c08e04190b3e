package faults

import (
	"strings"
	"testing"
	"time"
)

// A plan past the limits is refused by Validate, naming its field: too
// many events, too many clients (on their own or for the run's length),
// spans past MaxSpan, and clock jumps that add up past it.
func TestPlanLimits(t *testing.T) {
	s := Shape{Nodes: 5, Replication: 3, Hosts: 3, Clients: 3, Duration: 10 * time.Minute}
	pause := Event{Kind: Pause, For: time.Second}
	jump := Event{Kind: ClockJump, Target: NodeProcess, Delta: MaxSpan / 2}
	cases := []struct {
		name  string
		plan  Plan
		field string
	}{
		{"too many events", Plan{Events: make([]Event, MaxEvents+1)}, "events"},
		{"threads past MaxClients", Plan{ThreadsPerHost: MaxClients/3 + 1}, "threads_per_host"},
		{"negative threads", Plan{ThreadsPerHost: -1}, "threads_per_host"},
		{"clock offset", Plan{Clocks: []Clock{{Kind: HostProcess, Offset: -MaxSpan - 1}}}, "clocks[0].offset"},
		{"until validity left", Plan{Points: Points{PausePPM: 1, UntilValidityLeft: MaxSpan + 1}}, "points.until_validity_left"},
		{"pause for", Plan{Points: Points{PausePPM: 1, PauseFor: MaxSpan + 1}}, "points.pause_for"},
		{"extra latency", Plan{Network: Network{ExtraLatencyMax: MaxSpan + 1}}, "network.extra_latency_max"},
		{"fault length", Plan{Events: []Event{{Kind: Pause, For: MaxSpan + 1}}}, "events[0].for"},
		{"spread", Plan{Events: []Event{{Kind: Topology, Nodes: []int{0}, Spread: MaxSpan + 1}}}, "events[0].spread"},
		{"one jump", Plan{Events: []Event{{Kind: ClockJump, Target: HostProcess, Delta: -MaxSpan - 1}}}, "events[0].delta"},
		{"jumps in all", Plan{Events: []Event{jump, jump, jump}}, "events[2].delta"},
	}
	for _, c := range cases {
		err := c.plan.Validate(s)
		if err == nil || !strings.HasPrefix(err.Error(), "plan: "+c.field+" ") {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.field)
		}
	}
	long := s
	long.Duration = time.Hour
	if err := (Plan{ThreadsPerHost: 6}).Validate(long); err == nil || !strings.Contains(err.Error(), "client time") {
		t.Errorf("18 clients for an hour: %v, want past the client time", err)
	}
	ok := Plan{ThreadsPerHost: MaxClients / 3, Events: []Event{pause, jump, jump}}
	ok.Events[0].For = MaxSpan
	if err := ok.Validate(s); err != nil {
		t.Errorf("a plan at the limits: %v", err)
	}
}

// Decode refuses a file past MaxPlanBytes and anything but a JSON object
// before it decodes: null would otherwise be the fault-free plan.
func TestDecodeRefusesWhatIsNotAPlan(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"", "empty"},
		{"  \n", "empty"},
		{"null", "not a JSON object"},
		{"[]", "not a JSON object"},
		{"3", "not a JSON object"},
		{`"plan"`, "not a JSON object"},
		{"{} {}", "unexpected data"},
		{strings.Repeat(" ", MaxPlanBytes) + "{}", "more than the 32 MiB"},
	} {
		_, err := Decode([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%.20q): %v, want %q", c.data, err, c.want)
		}
	}
	if _, err := Decode([]byte(" {}\n")); err != nil {
		t.Errorf("Decode of the empty plan: %v", err)
	}
}
