package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
)

// A world past the limits is refused by Validate, naming its field: a run
// longer than faults.MaxDuration, more clients than faults.MaxClients or
// more client time than faults.MaxClientTime, a span past faults.MaxSpan,
// a cap past faults.MaxCap. At the limits it is valid.
func TestConfigLimits(t *testing.T) {
	cases := []struct {
		field string
		set   func(*Config)
	}{
		{"duration", func(c *Config) { c.Duration = faults.MaxDuration + 1 }},
		{"duration", func(c *Config) { c.Duration = 1 << 62 }},
		{"duration", func(c *Config) { c.Hosts, c.Duration = 17, time.Hour }},
		{"threads_per_host", func(c *Config) { c.Hosts, c.ThreadsPerHost = 5, 13 }},
		{"threads_per_host", func(c *Config) { c.ThreadsPerHost = 1 << 20 }},
		{"ttl", func(c *Config) { c.TTL = faults.MaxSpan + 1 }},
		{"latency_min", func(c *Config) { c.LatencyMin, c.LatencyMax = faults.MaxSpan+1, faults.MaxSpan+1 }},
		{"latency_tail", func(c *Config) { c.LatencyTail = faults.MaxSpan + 1 }},
		{"rpc_timeout", func(c *Config) { c.RPCTimeout = faults.MaxSpan + 1 }},
		{"hold_max", func(c *Config) { c.HoldMax = faults.MaxSpan + 1 }},
		{"think_max", func(c *Config) { c.ThinkMax = faults.MaxSpan + 1 }},
		{"slow_extra", func(c *Config) { c.SlowExtra = faults.MaxSpan + 1 }},
		{"max_events", func(c *Config) { c.MaxEvents = faults.MaxCap + 1 }},
		{"max_steps_no_yield", func(c *Config) { c.MaxStepsNoYield = faults.MaxCap + 1 }},
		{"max_calls_no_sleep", func(c *Config) { c.MaxCallsNoSleep = faults.MaxCap + 1 }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+tc.field+" ") {
			t.Errorf("%s: %v, want an error naming it", tc.field, err)
		}
	}
	c := DefaultConfig()
	c.Hosts, c.ThreadsPerHost, c.Duration = 16, 4, faults.MaxClientTime/64
	c.TTL, c.MaxEvents = faults.MaxSpan, faults.MaxCap
	if err := c.Validate(); err != nil {
		t.Errorf("a world at the limits: %v", err)
	}
}
