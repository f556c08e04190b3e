package sim

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/faults"
)

// Config is the shape of the simulated world and its workload. Every field
// documents its unit; DefaultConfig matches the blog post (replication 3,
// a one-minute lock expiry).
type Config struct {
	Nodes          int `json:"nodes"`            // DHT nodes in the cluster
	Replication    int `json:"replication"`      // nodes holding the key (topology size)
	Hosts          int `json:"hosts"`            // client hosts (distinct currentServerName values)
	ThreadsPerHost int `json:"threads_per_host"` // client threads on each host

	TTL      time.Duration `json:"ttl"`      // lock time-to-live (the post's one minute)
	Duration time.Duration `json:"duration"` // virtual time a run lasts

	LatencyMin  time.Duration `json:"latency_min"`  // one-way message latency, uniform in [min, max]
	LatencyMax  time.Duration `json:"latency_max"`  //
	LatencyTail time.Duration `json:"latency_tail"` // 1% of messages take up to this much longer
	RPCTimeout  time.Duration `json:"rpc_timeout"`  // a client gives up on a reply after this (ServerDown)

	HoldMin  time.Duration `json:"hold_min"`  // think time between resource read and write, uniform
	HoldMax  time.Duration `json:"hold_max"`  //
	ThinkMin time.Duration `json:"think_min"` // time between a client's attempts, uniform
	ThinkMax time.Duration `json:"think_max"` //

	// MaxEvents is the floor of the run's event cap (EventCap), which grows
	// with the clients and the duration; hitting it is a livelock finding.
	MaxEvents       int64 `json:"max_events"`
	MaxStepsNoYield int64 `json:"max_steps_no_yield"` // env calls a client may make without yielding
	// MaxCallsNoSleep is how many server calls a client may make in one
	// Acquire or Release without sleeping: more is an endless loop of calls
	// (a livelock finding, though virtual time passes). 0: the default,
	// DefaultMaxCallsNoSleep.
	MaxCallsNoSleep int64 `json:"max_calls_no_sleep,omitempty"`

	// RestartingVersions makes a node's per-key versions restart at 1 when a
	// key is re-created, so versions can repeat (ABA). Off: never reused.
	RestartingVersions bool `json:"restarting_versions,omitempty"`

	// Placement is how the DHT places keys on nodes: PlacementRing
	// (consistent hashing, each key its own replica set) or PlacementFirst
	// (every key on the first Replication nodes; "" reads as it, as repro
	// files from before placement existed were recorded).
	Placement string `json:"placement,omitempty"`

	// SlowExtra, when positive, makes one link slower than the rest:
	// every message between host SlowHost and node SlowNode (every node,
	// when SlowNode is -1: a slow client) takes up to this much longer.
	SlowExtra time.Duration `json:"slow_extra,omitempty"`
	SlowHost  int           `json:"slow_host,omitempty"`
	SlowNode  int           `json:"slow_node,omitempty"`

	// AppData is what the application keeps in the DHT besides the lock,
	// written by host h0 before the run: nothing (""), its data under the
	// locked key itself (AppDataKey), or that and data under the lock's
	// item name, <key>_lock, which the DHT places by that name
	// (AppDataLockName). The checker reports any of it destroyed.
	AppData string `json:"app_data,omitempty"`
	// RingSalt, when not zero, salts the ring positions of keys (not of
	// nodes): a key and its lock item's name, <key>_lock, then land on
	// the ring independently, and may have different nodes. Zero: the
	// names' own hashes, under which k and k_lock share their nodes in
	// every world of up to seven nodes.
	RingSalt int `json:"ring_salt,omitempty"`

	// Acquisitions, when positive, is how many grants each client thread
	// goes for: after its Acquisitions-th grant is released it stops (the
	// run goes on, for the checkers, to Duration). 0: clients go on until
	// the run ends. The small worlds of explore.Exhaust set it.
	Acquisitions int `json:"acquisitions,omitempty"`
}

// What the application keeps in the DHT (Config.AppData).
const (
	AppDataKey      = "key"
	AppDataLockName = "key+lock-name"
)

// DefaultConfig is the blog post's setting: five nodes, the key on three
// of them placed by consistent hashing, three hosts with one thread each, a
// one-minute TTL, ten simulated minutes.
func DefaultConfig() Config {
	return Config{
		Nodes: 5, Replication: 3, Hosts: 3, ThreadsPerHost: 1,
		TTL: time.Minute, Duration: 10 * time.Minute,
		LatencyMin: 1 * time.Millisecond, LatencyMax: 5 * time.Millisecond, LatencyTail: 50 * time.Millisecond,
		RPCTimeout: 200 * time.Millisecond,
		HoldMin:    100 * time.Millisecond, HoldMax: 2 * time.Second,
		ThinkMin: 100 * time.Millisecond, ThinkMax: 3 * time.Second,
		MaxEvents: 5_000_000, MaxStepsNoYield: 100_000,
		Placement: PlacementRing,
	}
}

// ConfigError names the field that is wrong.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("config: %s %s", e.Field, e.Reason) }

// Validate reports the first field that makes no sense.
func (c Config) Validate() error {
	bad := func(field, reason string) error { return &ConfigError{field, reason} }
	switch {
	case c.Nodes < 1:
		return bad("nodes", "must be at least 1")
	case c.Nodes > MaxNodes:
		return bad("nodes", fmt.Sprintf("(%d) must be at most %d", c.Nodes, MaxNodes))
	case c.Replication < 1:
		return bad("replication", "must be at least 1")
	case c.Replication > c.Nodes:
		return bad("replication", fmt.Sprintf("(%d) must not exceed nodes (%d)", c.Replication, c.Nodes))
	case c.Hosts < 1:
		return bad("hosts", "must be at least 1")
	case c.Hosts > MaxHosts:
		return bad("hosts", fmt.Sprintf("(%d) must be at most %d", c.Hosts, MaxHosts))
	case c.ThreadsPerHost < 1:
		return bad("threads_per_host", "must be at least 1")
	case c.ThreadsPerHost > faults.MaxClients/c.Hosts:
		return bad("threads_per_host", fmt.Sprintf("(%d) on %d hosts is more than %d client threads in all", c.ThreadsPerHost, c.Hosts, faults.MaxClients))
	case c.Acquisitions < 0:
		return bad("acquisitions", "must not be negative")
	case c.TTL <= 0:
		return bad("ttl", "must be positive")
	case c.Duration <= 0:
		return bad("duration", "must be positive")
	case c.Duration > faults.MaxDuration:
		return bad("duration", fmt.Sprintf("(%v) is longer than a run may last, %v", c.Duration, faults.MaxDuration))
	case time.Duration(c.Hosts*c.ThreadsPerHost)*c.Duration > faults.MaxClientTime:
		return bad("duration", fmt.Sprintf("(%v) with %d client threads is more than %v of client time (clients × duration)",
			c.Duration, c.Hosts*c.ThreadsPerHost, faults.MaxClientTime))
	case c.LatencyMin < 0:
		return bad("latency_min", "must not be negative")
	case c.LatencyMax < c.LatencyMin:
		return bad("latency_max", "must be at least latency_min")
	case c.LatencyTail < 0:
		return bad("latency_tail", "must not be negative")
	case c.RPCTimeout <= 0:
		return bad("rpc_timeout", "must be positive")
	case c.HoldMin < 0:
		return bad("hold_min", "must not be negative")
	case c.HoldMax < c.HoldMin:
		return bad("hold_max", "must be at least hold_min")
	case c.ThinkMin < 0:
		return bad("think_min", "must not be negative")
	case c.ThinkMax < c.ThinkMin:
		return bad("think_max", "must be at least think_min")
	case c.MaxEvents < 1:
		return bad("max_events", "must be at least 1")
	case c.MaxCallsNoSleep < 0:
		return bad("max_calls_no_sleep", "must not be negative")
	case c.MaxStepsNoYield < 1:
		return bad("max_steps_no_yield", "must be at least 1")
	case c.Placement != "" && c.Placement != PlacementFirst && c.Placement != PlacementRing:
		return bad("placement", fmt.Sprintf("%q is not %s or %s", c.Placement, PlacementRing, PlacementFirst))
	case c.SlowExtra < 0:
		return bad("slow_extra", "must not be negative")
	case c.SlowExtra > 0 && (c.SlowHost < 0 || c.SlowHost >= c.Hosts):
		return bad("slow_host", fmt.Sprintf("(%d) must name a host, 0..%d", c.SlowHost, c.Hosts-1))
	case c.SlowExtra > 0 && (c.SlowNode < -1 || c.SlowNode >= c.Nodes):
		return bad("slow_node", fmt.Sprintf("(%d) must name a node, 0..%d, or be -1 (every node)", c.SlowNode, c.Nodes-1))
	case c.AppData != "" && c.AppData != AppDataKey && c.AppData != AppDataLockName:
		return bad("app_data", fmt.Sprintf("%q is not %q or %q", c.AppData, AppDataKey, AppDataLockName))
	}
	return c.validateLimits()
}

// validateLimits reports the first duration or cap of c past its ceiling
// (faults.MaxSpan, faults.MaxCap): sums of them must never overflow, and
// a cap that high would let a runaway run go on for hours.
func (c Config) validateLimits() error {
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"ttl", c.TTL}, {"latency_min", c.LatencyMin}, {"latency_max", c.LatencyMax}, {"latency_tail", c.LatencyTail},
		{"rpc_timeout", c.RPCTimeout}, {"hold_min", c.HoldMin}, {"hold_max", c.HoldMax}, {"think_min", c.ThinkMin},
		{"think_max", c.ThinkMax}, {"slow_extra", c.SlowExtra}} {
		if d.v > faults.MaxSpan {
			return &ConfigError{d.field, fmt.Sprintf("(%v) is longer than %v, the longest span a world may have", d.v, faults.MaxSpan)}
		}
	}
	for _, n := range []struct {
		field string
		v     int64
	}{{"max_events", c.MaxEvents}, {"max_steps_no_yield", c.MaxStepsNoYield}, {"max_calls_no_sleep", c.MaxCallsNoSleep}} {
		if n.v > faults.MaxCap {
			return &ConfigError{n.field, fmt.Sprintf("(%d) is more than %d", n.v, faults.MaxCap)}
		}
	}
	return nil
}

// MaxNodes and MaxHosts bound a world: partitions keep their members as
// 64-bit masks.
const (
	MaxNodes = 64
	MaxHosts = 64
)

// Caps that end a runaway run with a livelock finding.
const (
	// DefaultMaxCallsNoSleep: the corrected locks make at most a few
	// hundred calls per attempt and sleep between attempts.
	DefaultMaxCallsNoSleep = 10_000
	// MaxEventsAtInstant is how many events may happen without virtual
	// time passing. Only a loop of calls that take no time gets near it:
	// a run of the default world makes about 35 events per virtual second.
	MaxEventsAtInstant = 1_000_000
	// EventsPerClientSecond scales the event cap: the default world makes
	// about 6 events per client per virtual second, so a run reaches the
	// cap only at more than 150 times that rate.
	EventsPerClientSecond = 1000
)

// EventCap is the run's event cap for clients clients: MaxEvents, or
// EventsPerClientSecond per client per second of Duration if that is more,
// so a long run with many clients is not cut short.
func (c Config) EventCap(clients int) int64 {
	scaled := int64(clients) * EventsPerClientSecond * int64(c.Duration/time.Second+1)
	return max(c.MaxEvents, scaled)
}

func (c Config) maxCallsNoSleep() int64 {
	if c.MaxCallsNoSleep > 0 {
		return c.MaxCallsNoSleep
	}
	return DefaultMaxCallsNoSleep
}

// Under is the config as plan p runs it: the plan's ThreadsPerHost, when
// set, overrides the configured threads on every host. Every place that
// checks or runs a plan goes through it, so the rule is written once.
func (c Config) Under(p faults.Plan) Config {
	if p.ThreadsPerHost > 0 {
		c.ThreadsPerHost = p.ThreadsPerHost
	}
	return c
}
