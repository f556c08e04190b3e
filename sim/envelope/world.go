package envelope

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// WorldField is a part of the simulated world that a seed may draw for
// itself, as swarm testing draws its faults: bugs live in corners of the
// configuration (one replica, six nodes, holds close to the TTL) as much as
// in fault schedules. Each names the scenario flags that pin it.
type WorldField string

const (
	WorldNodes       WorldField = "nodes"       // DHT nodes, 1–7, and the ring's salt for keys (-nodes, -ring-salt)
	WorldReplication WorldField = "replication" // nodes holding the key, 1–5, every value (-replication)
	WorldHosts       WorldField = "hosts"       // client hosts, 1–4 (-hosts)
	WorldThreads     WorldField = "threads"     // threads per host, 1–3 (-threads)
	WorldTTL         WorldField = "ttl"         // the lock's TTL, 5 s – 2 min (-ttl)
	WorldHold        WorldField = "hold"        // critical sections, ms to close to the TTL (-hold-min, -hold-max)
	WorldThink       WorldField = "think"       // time between attempts (-think-min, -think-max)
	WorldLatency     WorldField = "latency"     // uniform, long-tailed, one slow link, one slow client (-latency-min, -latency-max, -latency-tail, -slow-*)
	WorldVersions    WorldField = "versions"    // per-key versions that restart when a key is re-created (-restarting-versions)
	WorldData        WorldField = "data"        // the application's own data in the DHT, maybe under the lock's name (-app-data)
)

// EveryWorldField lists the fields in the order a world is drawn.
var EveryWorldField = []WorldField{WorldNodes, WorldReplication, WorldHosts, WorldThreads,
	WorldTTL, WorldHold, WorldThink, WorldLatency, WorldVersions, WorldData}

// worldFlags are the scenario flags that pin each field.
var worldFlags = map[WorldField][]string{
	WorldNodes: {"nodes", "ring-salt"}, WorldReplication: {"replication"}, WorldHosts: {"hosts"}, WorldThreads: {"threads"},
	WorldTTL: {"ttl"}, WorldHold: {"hold-min", "hold-max"}, WorldThink: {"think-min", "think-max"},
	WorldLatency:  {"latency-min", "latency-max", "latency-tail", "slow-extra", "slow-host", "slow-node"},
	WorldVersions: {"restarting-versions"}, WorldData: {"app-data"},
}

// worldJSON are the sim.Config JSON fields of each world field.
var worldJSON = map[WorldField][]string{
	WorldNodes: {"nodes", "ring_salt"}, WorldReplication: {"replication"}, WorldHosts: {"hosts"}, WorldThreads: {"threads_per_host"},
	WorldTTL: {"ttl"}, WorldHold: {"hold_min", "hold_max"}, WorldThink: {"think_min", "think_max"},
	WorldLatency:  {"latency_min", "latency_max", "latency_tail", "slow_extra", "slow_host", "slow_node"},
	WorldVersions: {"restarting_versions"}, WorldData: {"app_data"},
}

// WorldFieldsOfJSON are the world fields some of the named sim.Config JSON
// fields belong to: what a config file that gives them pins.
func WorldFieldsOfJSON(names []string) []WorldField {
	var out []WorldField
	for _, f := range EveryWorldField {
		if slices.ContainsFunc(worldJSON[f], func(n string) bool { return slices.Contains(names, n) }) {
			out = append(out, f)
		}
	}
	return out
}

// FlagsOf names the scenario flags that pin f.
func (f WorldField) FlagsOf() []string { return worldFlags[f] }

// FieldOfFlag is the world field a scenario flag pins, if any.
func FieldOfFlag(flag string) (WorldField, bool) {
	for _, f := range EveryWorldField {
		if slices.Contains(worldFlags[f], flag) {
			return f, true
		}
	}
	return "", false
}

// ParseWorld reads a list of world fields ("nodes,ttl"), or all, or none.
func ParseWorld(s string) ([]WorldField, error) {
	switch strings.TrimSpace(s) {
	case "none", "":
		return nil, nil
	case "all":
		return slices.Clone(EveryWorldField), nil
	}
	var out []WorldField
	for _, name := range strings.Split(s, ",") {
		f := WorldField(strings.TrimSpace(name))
		if !slices.Contains(EveryWorldField, f) {
			names := make([]string, len(EveryWorldField))
			for i, x := range EveryWorldField {
				names[i] = string(x)
			}
			return nil, fmt.Errorf("unknown world field %q (known: %s, or all, or none)", f, strings.Join(names, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return sortedFields(out), nil
}

func sortedFields(fs []WorldField) []WorldField {
	var out []WorldField
	for _, f := range EveryWorldField {
		if slices.Contains(fs, f) {
			out = append(out, f)
		}
	}
	return out
}

// DefaultWorld is what a seed of these classes draws of its world: all of
// it under ClassAll; under a single class, the fields its bugs live in
// (topology and crashes: how many nodes and replicas; amnesia: those and
// holds long enough for crashes to line up; threads: hosts and threads;
// pauses: holds and the TTL; skew and jumps: the TTL); none for a
// fault-free world.
func DefaultWorld(classes []faults.Class) []WorldField {
	a := faults.Allow(classes...)
	if a.Has(faults.ClassAll) {
		return slices.Clone(EveryWorldField)
	}
	var out []WorldField
	add := func(c faults.Class, fs ...WorldField) {
		if a.Has(c) {
			out = append(out, fs...)
		}
	}
	add(faults.ClassTopology, WorldNodes, WorldReplication)
	add(faults.ClassCrash, WorldNodes, WorldReplication)
	add(faults.ClassAmnesia, WorldNodes, WorldReplication, WorldHold)
	add(faults.ClassPartition, WorldNodes, WorldReplication)
	add(faults.ClassThreads, WorldHosts, WorldThreads)
	add(faults.ClassPause, WorldHold, WorldTTL)
	add(faults.ClassSkew, WorldTTL)
	add(faults.ClassJump, WorldTTL)
	return sortedFields(out)
}

// worldStream separates the world's draw from every other stream seeded
// with the same number.
const worldStream = 0x574f_524c_4421 // "WORLD!"

// WorldAt is the world seed runs in: the fields in World drawn from the
// seed, up to the edges of the assumptions it draws inside (BoundsAt), the
// others as Config sets them. With no World it is Config.
func (e Edges) WorldAt(seed uint64) sim.Config {
	if len(e.World) == 0 {
		return e.Config
	}
	return drawWorld(seed, e.Config, e.World, e.worldBounds(e.drawnAssumptions(seed)))
}

// worldBounds are the bounds the envelope puts on a seed's world.
type worldBounds struct {
	replication [2]int // the replication a seed may draw
	// data is what AppData a seed may draw: every kind (0), none under the
	// lock's name (-1, reserved names assumed), always under it (1, broken
	// on purpose).
	data int
	// lossMaxPPM, when positive, bounds the share of a slow link's round
	// trips that may outlast the RPC timeout (late replies are lost ones).
	lossMaxPPM int64
}

func (e Edges) worldBounds(a algorithm.Assumptions) worldBounds {
	b := worldBounds{replication: e.replicationRange(a)}
	if m := a.MessageLossMaxPPM; m > 0 && !slices.Contains(e.Beyond, algorithm.MessageLoss) {
		b.lossMaxPPM = m
	}
	if a.ReservedLockNames {
		b.data = -1
		if slices.Contains(e.Beyond, algorithm.ReservedLockNames) {
			b.data = 1
		}
	}
	return b
}

// replicationRange is the replication a seed may draw: every value, or
// inside the envelope at its minimum or above (below it, when the target
// breaks it: every seed then does).
func (e Edges) replicationRange(a algorithm.Assumptions) [2]int {
	r := [2]int{1, MaxWorldReplication}
	if least := a.ReplicationMin; least > 1 {
		if slices.Contains(e.Beyond, algorithm.ReplicationMin) {
			r[1] = min(least-1, MaxWorldReplication)
		} else {
			r[0] = min(least, MaxWorldReplication)
		}
	}
	return r
}

// drawWorld draws the fields of draw into base, from seed, within wb.
func drawWorld(seed uint64, base sim.Config, draw []WorldField, wb worldBounds) sim.Config {
	r := rand.New(rand.NewPCG(seed, worldStream))
	c := base
	has := func(f WorldField) bool { return slices.Contains(draw, f) }
	// The order of the draws is the meaning of a seed: each group below
	// draws from r in turn, and only for the fields asked for.
	drawShape(r, &c, base, has, wb.replication)
	drawTiming(r, &c, has)
	if has(WorldLatency) {
		drawLatency(r, &c, wb.lossMaxPPM)
	}
	if has(WorldVersions) {
		c.RestartingVersions = r.IntN(4) == 0
	}
	if has(WorldData) {
		// Half the worlds keep no data besides the lock; a quarter keep
		// their data under the locked key, a quarter under <key>_lock too.
		switch x := r.IntN(4); {
		case wb.data > 0:
			c.AppData = sim.AppDataLockName
		case x == 2 || (x == 3 && wb.data < 0):
			c.AppData = sim.AppDataKey
		case x == 3:
			c.AppData = sim.AppDataLockName
		default:
			c.AppData = ""
		}
	}
	if has(WorldNodes) && c.Placement == sim.PlacementRing {
		// Drawn last, so that every earlier field of a seed is what it
		// was. A quarter of the worlds salt the keys' ring positions, so
		// that a key and <key>_lock may land on different nodes: with
		// the names' own hashes they share their nodes in every world of
		// up to seven nodes, and a scavenge that reads the lock item's
		// own topology (the post's text) could never go wrong.
		c.RingSalt = 0
		if r.IntN(4) == 0 {
			c.RingSalt = 1 + r.IntN(1<<30)
		}
	}
	return c
}

// drawBetween draws a whole number of milliseconds in [lo, hi].
func drawBetween(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Millisecond*time.Duration(r.Int64N(int64((hi-lo)/time.Millisecond)+1))
}

// drawShape draws the world's size: nodes, replication (within rep),
// hosts, threads per host.
func drawShape(r *rand.Rand, c *sim.Config, base sim.Config, has func(WorldField) bool, rep [2]int) {
	if has(WorldNodes) {
		lo := rep[0]
		if !has(WorldReplication) {
			lo = base.Replication // the pinned replication must fit
		}
		c.Nodes = lo + r.IntN(max(MaxWorldNodes, lo)-lo+1)
	}
	if has(WorldReplication) {
		hi := min(rep[1], c.Nodes)
		c.Replication = rep[0] + r.IntN(max(hi-rep[0], 0)+1)
	}
	if has(WorldHosts) {
		c.Hosts = 1 + r.IntN(MaxWorldHosts)
	}
	if has(WorldThreads) {
		c.ThreadsPerHost = 1 + r.IntN(MaxWorldThreads)
	}
}

// drawTiming draws the TTL and the workload's hold and think times.
func drawTiming(r *rand.Rand, c *sim.Config, has func(WorldField) bool) {
	if has(WorldTTL) {
		// The post's minute a third of the time, else anything from 5 s to
		// 2 min: a short TTL expires (and is scavenged) many times a run.
		if r.IntN(3) != 0 {
			c.TTL = drawBetween(r, 5*time.Second, 2*time.Minute)
		} else {
			c.TTL = time.Minute
		}
	}
	if has(WorldHold) {
		switch r.IntN(3) {
		case 0: // short, as the default world's
			c.HoldMin, c.HoldMax = drawBetween(r, time.Millisecond, 100*time.Millisecond), drawBetween(r, 100*time.Millisecond, 2*time.Second)
		case 1: // up to a quarter of the TTL
			c.HoldMin, c.HoldMax = drawBetween(r, time.Millisecond, time.Second), drawBetween(r, time.Second, max(time.Second, c.TTL/4))
		default: // close to the TTL: a holder that finishes just in time, or not
			c.HoldMin = drawBetween(r, c.TTL/3, c.TTL/2)
			c.HoldMax = drawBetween(r, c.HoldMin, c.TTL-c.TTL/20)
		}
	}
	if has(WorldThink) {
		switch r.IntN(3) {
		case 0: // hot contention
			c.ThinkMin, c.ThinkMax = 0, drawBetween(r, time.Millisecond, 100*time.Millisecond)
		case 1: // the default world's
			c.ThinkMin, c.ThinkMax = 100*time.Millisecond, 3*time.Second
		default: // idle clients
			c.ThinkMin, c.ThinkMax = drawBetween(r, time.Second, 5*time.Second), drawBetween(r, 5*time.Second, 30*time.Second)
		}
	}
}

// drawLatency draws the network's latency profile; lossMaxPPM (> 0) bounds
// what late replies may take of the envelope's message loss.
func drawLatency(r *rand.Rand, c *sim.Config, lossMaxPPM int64) {
	c.SlowExtra, c.SlowHost, c.SlowNode = 0, 0, 0
	switch r.IntN(4) {
	case 0: // uniform, no tail
		c.LatencyMin, c.LatencyMax, c.LatencyTail = drawBetween(r, 0, 2*time.Millisecond), drawBetween(r, 2*time.Millisecond, 20*time.Millisecond), 0
	case 1: // long-tailed: 1% of messages take up to twice the RPC timeout longer
		c.LatencyMin, c.LatencyMax = time.Millisecond, 5*time.Millisecond
		c.LatencyTail = drawBetween(r, 50*time.Millisecond, 2*c.RPCTimeout)
		if lossMaxPPM > 0 {
			c.LatencyTail = longestTailWithin(*c, lossMaxPPM-1) // leaves the plan 1 ppm at least
		}
	default: // the default's, and one slow link (a host to a node) or one slow client (a host to every node)
		d := sim.DefaultConfig()
		c.LatencyMin, c.LatencyMax, c.LatencyTail = d.LatencyMin, d.LatencyMax, d.LatencyTail
		c.SlowExtra = drawBetween(r, 20*time.Millisecond, 2*c.RPCTimeout)
		if lossMaxPPM > 0 {
			c.SlowExtra = slowestWithin(*c, lossMaxPPM-1) // leaves the plan 1 ppm at least
		}
		c.SlowHost, c.SlowNode = r.IntN(c.Hosts), r.IntN(c.Nodes)
		if r.IntN(2) == 0 {
			c.SlowNode = -1
		}
	}
}

// The largest world a seed draws (its smallest is one of each); a check
// of the largest world a target may run in needs them.
const (
	MaxWorldNodes       = 7
	MaxWorldReplication = 5
	MaxWorldHosts       = 4 // hosts 1..4
	MaxWorldThreads     = 3 // threads per host 1..3
)

// DescribeWorld is the drawn fields of c, one phrase each: how a failure
// says which world it happened in.
func DescribeWorld(c sim.Config, draw []WorldField) string {
	var parts []string
	for _, f := range draw {
		switch f {
		case WorldNodes:
			parts = append(parts, fmt.Sprintf("nodes %d", c.Nodes))
			if c.RingSalt != 0 {
				parts = append(parts, fmt.Sprintf("ring salt %d", c.RingSalt))
			}
		case WorldReplication:
			parts = append(parts, fmt.Sprintf("replication %d", c.Replication))
		case WorldHosts:
			parts = append(parts, fmt.Sprintf("hosts %d", c.Hosts))
		case WorldThreads:
			parts = append(parts, fmt.Sprintf("threads %d", c.ThreadsPerHost))
		case WorldTTL:
			parts = append(parts, "ttl "+Span(c.TTL))
		case WorldHold:
			parts = append(parts, fmt.Sprintf("hold %s..%s", Span(c.HoldMin), Span(c.HoldMax)))
		case WorldThink:
			parts = append(parts, fmt.Sprintf("think %s..%s", Span(c.ThinkMin), Span(c.ThinkMax)))
		case WorldLatency:
			parts = append(parts, fmt.Sprintf("latency %s..%s +%s tail", Span(c.LatencyMin), Span(c.LatencyMax), Span(c.LatencyTail)))
			if c.SlowExtra > 0 {
				parts = append(parts, DescribeSlowLink(c))
			}
		case WorldVersions:
			if c.RestartingVersions {
				parts = append(parts, "restarting versions")
			} else {
				parts = append(parts, "versions never reused")
			}
		case WorldData:
			switch c.AppData {
			case sim.AppDataKey:
				parts = append(parts, "app data under the key")
			case sim.AppDataLockName:
				parts = append(parts, "app data under the key and its lock's name")
			default:
				parts = append(parts, "no app data")
			}
		}
	}
	return strings.Join(parts, ", ")
}

// slowestWithin is c.SlowExtra, or less: the most, to the millisecond, at
// which at most maxPPM of the worst link's round trips outlast the RPC
// timeout (lateOf), so a world inside the envelope keeps its loss bound.
func slowestWithin(c sim.Config, maxPPM int64) time.Duration {
	return lateWithin(c, maxPPM, c.SlowExtra, func(c *sim.Config, d time.Duration) { c.SlowExtra = d })
}

// longestTailWithin is c.LatencyTail, or less, as slowestWithin.
func longestTailWithin(c sim.Config, maxPPM int64) time.Duration {
	return lateWithin(c, maxPPM, c.LatencyTail, func(c *sim.Config, d time.Duration) { c.LatencyTail = d })
}

// lateWithin is the largest d <= upTo, to the millisecond, for which the
// world with set(c, d) has at most maxPPM of its round trips late.
func lateWithin(c sim.Config, maxPPM int64, upTo time.Duration, set func(*sim.Config, time.Duration)) time.Duration {
	lo, hi := int64(0), upTo.Milliseconds()
	for lo < hi {
		mid := (lo + hi + 1) / 2
		set(&c, time.Duration(mid)*time.Millisecond)
		if lateOf(c) <= maxPPM {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return time.Duration(lo) * time.Millisecond
}

// DescribeSlowLink is c's slow link in words: "h0 to n3 up to 120ms
// slower" (to every node: a slow client).
func DescribeSlowLink(c sim.Config) string {
	to := fmt.Sprintf("n%d", c.SlowNode)
	if c.SlowNode < 0 {
		to = "every node"
	}
	return fmt.Sprintf("h%d to %s up to %s slower", c.SlowHost, to, c.SlowExtra)
}

// IsSubset reports whether every field of a is in b: a target's World
// inside the fields its classes draw by default (DefaultWorld) needs no
// -world flag to replay.
func IsSubset(a, b []WorldField) bool {
	for _, f := range a {
		if !slices.Contains(b, f) {
			return false
		}
	}
	return true
}

// WorldList is fs as -world reads it (ParseWorld): comma-separated, all,
// or none.
func WorldList(fs []WorldField) string {
	if len(fs) == 0 {
		return "none"
	}
	if len(fs) == len(EveryWorldField) {
		return "all"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ",")
}

// WorldGen draws the fields of draw into base for property-based tests, as
// drawWorld does for a seed, over the same ranges; rapid shrinks every field
// toward the post's world (five nodes, replication 3, three hosts of one
// thread, a minute's TTL, the default holds, think times and latency), so a
// shrunk counterexample keeps only the unusual settings it needs.
func WorldGen(base sim.Config, draw []WorldField) *rapid.Generator[sim.Config] {
	has := func(f WorldField) bool { return slices.Contains(draw, f) }
	return rapid.Custom(func(t *rapid.T) sim.Config {
		c := base
		genShape(t, &c, base, has)
		genTiming(t, &c, has)
		if has(WorldLatency) {
			genLatency(t, &c)
		}
		if has(WorldVersions) {
			c.RestartingVersions = rapid.Bool().Draw(t, "restarting versions")
		}
		if has(WorldData) {
			c.AppData = rapid.SampledFrom([]string{"", sim.AppDataKey, sim.AppDataLockName}).Draw(t, "app data")
		}
		return c
	})
}

// postFirst lists lo..hi with def first, where rapid shrinks to.
func postFirst(def int, lo, hi int) []int {
	out := []int{def}
	for v := lo; v <= hi; v++ {
		if v != def {
			out = append(out, v)
		}
	}
	return out
}

// genMillis draws a whole number of milliseconds in [lo, hi].
func genMillis(t *rapid.T, lo, hi time.Duration, label string) time.Duration {
	return time.Millisecond * time.Duration(rapid.Int64Range(int64(lo/time.Millisecond), int64(hi/time.Millisecond)).Draw(t, label))
}

// genShape is drawShape for rapid.
func genShape(t *rapid.T, c *sim.Config, base sim.Config, has func(WorldField) bool) {
	d := sim.DefaultConfig()
	if has(WorldNodes) {
		lo := 1
		if !has(WorldReplication) {
			lo = base.Replication
		}
		c.Nodes = rapid.SampledFrom(postFirst(max(d.Nodes, lo), lo, max(MaxWorldNodes, lo))).Draw(t, "nodes")
	}
	if has(WorldReplication) {
		c.Replication = min(c.Nodes, rapid.SampledFrom(postFirst(d.Replication, 1, MaxWorldReplication)).Draw(t, "replication"))
	}
	if has(WorldHosts) {
		c.Hosts = rapid.SampledFrom(postFirst(d.Hosts, 1, 4)).Draw(t, "hosts")
	}
	if has(WorldThreads) {
		c.ThreadsPerHost = rapid.SampledFrom(postFirst(d.ThreadsPerHost, 1, 3)).Draw(t, "threads")
	}
}

// genTiming is drawTiming for rapid.
func genTiming(t *rapid.T, c *sim.Config, has func(WorldField) bool) {
	d := sim.DefaultConfig()
	if has(WorldTTL) && rapid.Bool().Draw(t, "other ttl") {
		c.TTL = genMillis(t, 5*time.Second, 2*time.Minute, "ttl")
	} else if has(WorldTTL) {
		c.TTL = d.TTL
	}
	if has(WorldHold) {
		switch rapid.IntRange(0, 2).Draw(t, "hold profile") {
		case 0:
			c.HoldMin, c.HoldMax = d.HoldMin, d.HoldMax
		case 1: // up to a quarter of the TTL
			c.HoldMin = genMillis(t, time.Millisecond, time.Second, "hold min")
			c.HoldMax = genMillis(t, time.Second, max(time.Second, c.TTL/4), "hold max")
		default: // close to the TTL
			c.HoldMin = genMillis(t, c.TTL/3, c.TTL/2, "hold min")
			c.HoldMax = genMillis(t, c.HoldMin, c.TTL-c.TTL/20, "hold max")
		}
	}
	if has(WorldThink) {
		switch rapid.IntRange(0, 2).Draw(t, "think profile") {
		case 0:
			c.ThinkMin, c.ThinkMax = d.ThinkMin, d.ThinkMax
		case 1: // hot contention
			c.ThinkMin, c.ThinkMax = 0, genMillis(t, time.Millisecond, 100*time.Millisecond, "think max")
		default: // idle clients
			c.ThinkMin = genMillis(t, time.Second, 5*time.Second, "think min")
			c.ThinkMax = genMillis(t, 5*time.Second, 30*time.Second, "think max")
		}
	}
}

// genLatency is drawLatency for rapid.
func genLatency(t *rapid.T, c *sim.Config) {
	d := sim.DefaultConfig()
	slowExtra := genMillis(t, 20*time.Millisecond, 2*c.RPCTimeout, "slow extra")
	slowHost, slowNode := rapid.IntRange(0, c.Hosts-1).Draw(t, "slow host"), rapid.IntRange(-1, c.Nodes-1).Draw(t, "slow node")
	c.SlowExtra, c.SlowHost, c.SlowNode = 0, 0, 0
	switch rapid.IntRange(0, 3).Draw(t, "latency profile") {
	case 3: // one slow link, or (node -1) one slow client
		c.LatencyMin, c.LatencyMax, c.LatencyTail = d.LatencyMin, d.LatencyMax, d.LatencyTail
		c.SlowExtra, c.SlowHost, c.SlowNode = slowExtra, slowHost, slowNode
	case 0:
		c.LatencyMin, c.LatencyMax, c.LatencyTail = d.LatencyMin, d.LatencyMax, d.LatencyTail
	case 1: // uniform, no tail
		c.LatencyMin = genMillis(t, 0, 2*time.Millisecond, "latency min")
		c.LatencyMax, c.LatencyTail = genMillis(t, 2*time.Millisecond, 20*time.Millisecond, "latency max"), 0
	default: // long-tailed
		c.LatencyMin, c.LatencyMax = time.Millisecond, 5*time.Millisecond
		c.LatencyTail = genMillis(t, 50*time.Millisecond, 2*c.RPCTimeout, "latency tail")
	}
}

// Span writes d as Go does, but to the millisecond from a second up
// (18.575s, not 18.575333333s), and whole minutes and hours short ("1m",
// not "1m0s"; "2h", not "2h0m0s"): how world lines and the CLI write a
// span.
func Span(d time.Duration) string {
	if d >= time.Second {
		d = d.Round(time.Millisecond)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
