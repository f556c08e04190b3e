package seedrun

import (
	"flag"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/schedule"
)

// CommandPrefix is how every printed locksim command starts. The default
// works from a clone of the repository; the locksim command sets it to the
// way it was started (its own name, for a built binary), so a printed
// replay line works when pasted.
var CommandPrefix = DefaultCommandPrefix

// DefaultCommandPrefix runs the command from a clone.
const DefaultCommandPrefix = "go run ./cmd/locksim"

// configFlag ties a scenario flag to its config field.
type configFlag struct {
	name, usage string
	dur         func(*sim.Config) *time.Duration
	num         func(*sim.Config) *int
	flag        func(*sim.Config) *bool
	str         func(*sim.Config) *string // "" reads and prints as none
}

var configFlags = []configFlag{
	{name: "nodes", usage: "DHT nodes", num: func(c *sim.Config) *int { return &c.Nodes }},
	{name: "replication", usage: "nodes holding the key (the post: usually 1 or 3)", num: func(c *sim.Config) *int { return &c.Replication }},
	{name: "hosts", usage: "client hosts (distinct currentServerName)", num: func(c *sim.Config) *int { return &c.Hosts }},
	{name: "threads", usage: "client threads per host (they share the host name)", num: func(c *sim.Config) *int { return &c.ThreadsPerHost }},
	{name: "ttl", usage: "lock time-to-live", dur: func(c *sim.Config) *time.Duration { return &c.TTL }},
	{name: "duration", usage: "virtual time per run", dur: func(c *sim.Config) *time.Duration { return &c.Duration }},
	{name: "latency-min", usage: "one-way message latency, minimum", dur: func(c *sim.Config) *time.Duration { return &c.LatencyMin }},
	{name: "latency-max", usage: "one-way message latency, maximum", dur: func(c *sim.Config) *time.Duration { return &c.LatencyMax }},
	{name: "latency-tail", usage: "extra latency for the slowest 1% of messages", dur: func(c *sim.Config) *time.Duration { return &c.LatencyTail }},
	{name: "rpc-timeout", usage: "client RPC timeout (then ServerDown)", dur: func(c *sim.Config) *time.Duration { return &c.RPCTimeout }},
	{name: "hold-min", usage: "how long a holder keeps the lock (its critical section), minimum", dur: func(c *sim.Config) *time.Duration { return &c.HoldMin }},
	{name: "hold-max", usage: "how long a holder keeps the lock (its critical section), maximum", dur: func(c *sim.Config) *time.Duration { return &c.HoldMax }},
	{name: "think-min", usage: "time between attempts, minimum", dur: func(c *sim.Config) *time.Duration { return &c.ThinkMin }},
	{name: "think-max", usage: "time between attempts, maximum", dur: func(c *sim.Config) *time.Duration { return &c.ThinkMax }},
	{name: "slow-extra", usage: "one slow link: messages between -slow-host and -slow-node take up to this much longer (0: none)", dur: func(c *sim.Config) *time.Duration { return &c.SlowExtra }},
	{name: "slow-host", usage: "the slow link's host", num: func(c *sim.Config) *int { return &c.SlowHost }},
	{name: "slow-node", usage: "the slow link's node, or -1: every node (a slow client)", num: func(c *sim.Config) *int { return &c.SlowNode }},
	{name: "app-data", usage: "the application's own data in the DHT: none, key (under the locked key) or key+lock-name (also under <key>_lock)", str: func(c *sim.Config) *string { return &c.AppData }},
	{name: "acquisitions", usage: "grants each client goes for before it stops (0: no limit, until the run ends)", num: func(c *sim.Config) *int { return &c.Acquisitions }},
	{name: "ring-salt", usage: "salt of the keys' positions on the ring (0: none): with one, a key and <key>_lock may land on different nodes", num: func(c *sim.Config) *int { return &c.RingSalt }},
	{name: "restarting-versions", usage: "per-key versions restart at 1 when a key is re-created, so a version can repeat (ABA)", flag: func(c *sim.Config) *bool { return &c.RestartingVersions }},
}

// RegisterConfigFlags adds the scenario flags to fs, writing into c (whose
// current values are the defaults shown).
func RegisterConfigFlags(fs *flag.FlagSet, c *sim.Config) {
	for _, f := range configFlags {
		switch {
		case f.num != nil:
			fs.IntVar(f.num(c), f.name, *f.num(c), f.usage)
		case f.flag != nil:
			fs.BoolVar(f.flag(c), f.name, *f.flag(c), f.usage)
		case f.str != nil:
			fs.Var((*noneString)(f.str(c)), f.name, f.usage)
		default:
			fs.DurationVar(f.dur(c), f.name, *f.dur(c), f.usage)
		}
	}
}

// noneString is a string flag whose empty value reads and prints as none.
type noneString string

func (s *noneString) String() string {
	if s == nil || *s == "" {
		return "none"
	}
	return string(*s)
}

func (s *noneString) Set(v string) error {
	if v == "none" {
		v = ""
	}
	*s = noneString(v)
	return nil
}

// ConfigArgs are the flags that turn the default config into c.
func ConfigArgs(c sim.Config) []string { return configArgs(c, nil, nil) }

// configArgs are the flags that turn the default config into c, leaving out
// those of the fields drawn and giving those of the fields pinned even
// where they equal the default.
func configArgs(c sim.Config, drawn, pinned []envelope.WorldField) []string {
	d := sim.DefaultConfig()
	var args []string
	for _, f := range configFlags {
		field, isWorld := envelope.FieldOfFlag(f.name)
		if isWorld && slices.Contains(drawn, field) {
			continue
		}
		pin := isWorld && slices.Contains(pinned, field)
		switch {
		case f.num != nil:
			if pin || *f.num(&c) != *f.num(&d) {
				args = append(args, "-"+f.name, itoa(*f.num(&c)))
			}
		case f.flag != nil:
			if pin || *f.flag(&c) != *f.flag(&d) {
				args = append(args, "-"+f.name+"="+strconv.FormatBool(*f.flag(&c)))
			}
		case f.str != nil:
			if pin || *f.str(&c) != *f.str(&d) {
				args = append(args, "-"+f.name, (*noneString)(f.str(&c)).String())
			}
		default:
			if pin || *f.dur(&c) != *f.dur(&d) {
				args = append(args, "-"+f.name, f.dur(&c).String())
			}
		}
	}
	return args
}

// ReplayCommand is the one command that replays seed of target: the plan and
// the world are redrawn from the seed, classes, what it breaks beyond the
// envelope and the fields it draws, so no file is needed. Fields the
// classes would draw but the target pins are given as flags; a target that
// draws other fields names them all with -world.
func ReplayCommand(t Target, seed uint64) string {
	args := []string{CommandPrefix, "replay", "-variant", t.Variant.Name, "-seed", utoa(seed)}
	if len(t.Classes) > 0 {
		cs := make([]string, len(t.Classes))
		for i, c := range t.Classes {
			cs[i] = string(c)
		}
		args = append(args, "-faults", strings.Join(cs, ","))
	} else {
		args = append(args, "-faults", "none") // the commands default to all
	}
	if len(t.Beyond) > 0 {
		args = append(args, "-beyond", envelope.AssumptionList(t.Beyond))
	}
	if len(t.Changes) > 0 {
		cs := make([]string, len(t.Changes))
		for i, c := range t.Changes {
			cs[i] = string(c)
		}
		args = append(args, "-changes", strings.Join(cs, ","))
	}
	if p := t.PCT; p != nil {
		args = append(args, "-pct", itoa(p.Depth))
		if p.Steps != schedule.DefaultPCTSteps {
			args = append(args, "-pct-steps", itoa(p.Steps))
		}
	}
	def := envelope.DefaultWorld(t.Classes)
	var pinned []envelope.WorldField
	if envelope.IsSubset(t.World, def) {
		pinned = slices.DeleteFunc(slices.Clone(def), func(f envelope.WorldField) bool { return slices.Contains(t.World, f) })
	} else {
		args = append(args, "-world", envelope.WorldList(t.World))
	}
	args = append(args, configArgs(t.Config, t.World, pinned)...)
	return strings.Join(args, " ")
}

// ReplayFileCommand replays a repro file (needed once a plan was minimised).
func ReplayFileCommand(path string) string { return CommandPrefix + " replay " + path }

func utoa(u uint64) string { return strconv.FormatUint(u, 10) }
func itoa(i int) string    { return strconv.Itoa(i) }
