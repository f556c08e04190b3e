// Package faults describes what goes wrong in a scenario, as plain,
// serialisable data (a Plan), and generates plans: swarm-random and rapid.
// It imports nothing of locksim's; the simulator (package sim) applies plans.
//
// Probabilities are integers in parts per million (PPM) so that no float
// ever takes part in a scheduling decision.
package faults

import (
	"math/rand/v2"
	"slices"
	"time"
)

// PPM is a probability in parts per million: 0 never, 1_000_000 always.
type PPM uint32

// Million is PPM's "always".
const Million PPM = 1_000_000

// Plan is everything that goes wrong in one scenario. The zero Plan is a
// fault-free run. JSON round-trips exactly.
type Plan struct {
	// Network holds steady network settings for the whole run.
	Network Network `json:"network"`
	// Clocks sets per-process clock offset and drift. Processes without an
	// entry have perfect clocks.
	Clocks []Clock `json:"clocks,omitempty"`
	// ThreadsPerHost, when > 0, overrides the config's client threads per host
	// (the "threads" class: several threads share one host name).
	ThreadsPerHost int `json:"threads_per_host,omitempty"`
	// Points fires pauses at named places of a client's life (BUGGIFY).
	Points Points `json:"points"`
	// Zones put hosts in local time zones: what DateTime.Now reads there
	// (algorithm.Env.LocalNow). Hosts without an entry are on UTC.
	Zones []Zone `json:"zones,omitempty"`
	// Events are timed faults, sorted by At.
	Events []Event `json:"events,omitempty"`
	// Deployment lapses: what the deployment fails to provide a variant
	// that needs it. Only plans that break an envelope on purpose set them.
	Deployment Deployment `json:"deployment,omitzero"`
	// Use is how the application misuses the lock, as applications do.
	// Only the real-code workload (sim/realredis) reads it: the kernel's
	// workload, written against algorithm.Env, does not.
	Use Use `json:"use,omitzero"`
}

// Use is how the application misuses its lock, drawn per seed for a lock
// run unmodified (seedrun.Target.PlanFor, under class pause): the misuses
// the bugs of real libraries live in. Each use is judged against the
// truth: acting on what the library reported is safe only if the nodes
// really granted it.
type Use struct {
	// LatePPM is the chance, per hold, that its holder stalls past its
	// validity (a pause of its own making: a GC pause, a slow step) until
	// up to LateBy after the validity ended, and then carries on as
	// careless code does: it extends (when the lock can), and if the
	// library reports success, reads the resource again and goes on using
	// it for the validity Extend reported; otherwise it unlocks.
	LatePPM PPM           `json:"late_ppm,omitempty"`
	LateBy  time.Duration `json:"late_by,omitempty"`
	// ShortDeadlinePPM is the chance, per acquire, that Lock is called with
	// a context whose deadline is at most Deadline away: shorter than one
	// retry, as a request handler's budget is.
	ShortDeadlinePPM PPM           `json:"short_deadline_ppm,omitempty"`
	Deadline         time.Duration `json:"deadline,omitempty"`
	// RefreshPPM is the chance, per release of a lock that extends, that a
	// refresher not stopped first (a watchdog, a heartbeat) calls Extend
	// while its holder calls Unlock: one of the two starts up to 5 ms after
	// the other, so that both are in flight at once. The application is
	// careful: it does not use the lock again, and when the refresher did
	// not report a definite failure it unlocks once more. A release that
	// then returns success while the key its Lock wrote holds the lock in
	// its name is a leaked lock.
	RefreshPPM PPM `json:"refresh_ppm,omitempty"`
}

// DrawUse is the misuse a seed draws for a lock of TTL ttl: holders that
// stall past their validity by up to two TTLs in some seeds, short
// deadlines in others, both in some, neither in a quarter; and in a third
// of the seeds with misuse, a refresher that extends as its holder
// unlocks. It draws from a stream of its own, so the rest of the seed's
// plan is the same with it as without it.
func DrawUse(seed uint64, ttl time.Duration) Use {
	r := rand.New(rand.NewPCG(seed, 0x757365))
	var u Use
	switch r.IntN(4) {
	case 0:
		return u
	case 1:
		u.LatePPM = PPM(50_000 + r.IntN(250_000))
	case 2:
		u.ShortDeadlinePPM = PPM(50_000 + r.IntN(250_000))
	default:
		u.LatePPM = PPM(20_000 + r.IntN(100_000))
		u.ShortDeadlinePPM = PPM(20_000 + r.IntN(100_000))
	}
	if u.LatePPM > 0 {
		u.LateBy = time.Millisecond + time.Duration(r.Int64N(int64(2*ttl)))
	}
	if u.ShortDeadlinePPM > 0 {
		u.Deadline = time.Millisecond + time.Duration(r.Int64N(int64(300*time.Millisecond)))
	}
	if r.IntN(3) == 0 {
		u.RefreshPPM = PPM(50_000 + r.IntN(250_000))
	}
	return u
}

// Deployment lists what the simulated deployment may fail to provide. A
// variant's envelope says what it needs (algorithm.Assumptions); by default
// the deployment provides it.
type Deployment struct {
	// NoQuarantine: restarted nodes take lock writes at once, even for a
	// variant that needs them quarantined for one TTL.
	NoQuarantine bool `json:"no_quarantine,omitempty"`
	// NoFencing: the resource ignores fencing tokens, even for a variant
	// that needs them checked.
	NoFencing bool `json:"no_fencing,omitempty"`
}

// Network is the steady behaviour of every message.
type Network struct {
	LossPPM      PPM `json:"loss_ppm,omitempty"`       // a message (request or reply) is dropped
	DuplicatePPM PPM `json:"duplicate_ppm,omitempty"`  // a message is delivered twice
	ReplyLossPPM PPM `json:"reply_loss_ppm,omitempty"` // a reply is dropped after the request was applied
	// ExtraLatencyMax adds up to this much latency to every message (on top of the config's).
	ExtraLatencyMax time.Duration `json:"extra_latency_max,omitempty"`
}

// ProcessKind says whether a clock or fault targets a node or a host.
type ProcessKind string

const (
	NodeProcess ProcessKind = "node"
	HostProcess ProcessKind = "host"
)

// DriftAt is how far, in ns, a clock drifting by driftPPM has moved from
// true time after t ns: t*driftPPM/1e6 without overflow for any run
// shorter than centuries. The simulator's clocks read it.
func DriftAt(driftPPM, t int64) int64 {
	if driftPPM == 0 {
		return 0 // most clocks: skip the divisions
	}
	return t/1_000_000*driftPPM + t%1_000_000*driftPPM/1_000_000
}

// Clock sets one process's clock: local = true + Offset + drift + jumps.
type Clock struct {
	Kind     ProcessKind   `json:"kind"`
	Index    int           `json:"index"`
	Offset   time.Duration `json:"offset,omitempty"`
	DriftPPM int64         `json:"drift_ppm,omitempty"` // local runs fast by this many ns per ms of true time
}

// Zone is one host's local time: UTC plus Offset, and plus Shift more
// from true time ShiftAt on (a daylight-saving transition; zero Shift:
// none). Clocks (offset, drift, jumps) are UTC and are not changed by it.
type Zone struct {
	Host    int           `json:"host"`
	Offset  time.Duration `json:"offset,omitempty"`
	ShiftAt time.Duration `json:"shift_at,omitempty"`
	Shift   time.Duration `json:"shift,omitempty"`
}

// Points are the BUGGIFY-style fault points: with probability PausePPM, a
// client pauses for PauseFor at each named point.
//
// UntilValidityLeft, when non-zero, sizes a pause by the holder's validity
// instead: at a point where the client holds a grant with a validity, the
// pause lasts until only UntilValidityLeft of the validity is left
// (negative: until that long after it ended), and not at all when less is
// left. That is how a plan reaches the edge of a validity deadline, just
// under it or just past it, whatever the validity turns out to be. At a
// point without a validity the pause is PauseFor (none when zero).
type Points struct {
	PausePPM          PPM           `json:"pause_ppm,omitempty"`
	PauseFor          time.Duration `json:"pause_for,omitempty"`
	UntilValidityLeft time.Duration `json:"until_validity_left,omitempty"`
}

// Point names a place in a client's life where bugs hide.
type Point string

const (
	AfterGrant       Point = "after-grant"        // right after acquire returned granted
	BetweenReadWrite Point = "between-read-write" // between the resource read and write
	BeforeRelease    Point = "before-release"     // just before release is called
	// InAcquire is where a timed pause may wait to strike: before one of
	// the server calls inside Acquire (between the calls of LockKey, inside
	// its scavenge; each call is struck with a chance of one in three, so
	// the first writes may already be made), which slows an acquire past
	// its lock's margins.
	InAcquire Point = "in-acquire"
	// BeforeDelete is where a timed pause may wait to strike instead: just
	// before the client's next delete inside Acquire (RemoveKey or
	// CompareAndDelete): in the original, inside ScavengeExpiredLocks,
	// between reading an expired item and removing it.
	BeforeDelete Point = "before-delete"
	// WhileHeld is where a topology change may wait to strike: while some
	// client holds the lock (at At if one does, else just after the next
	// grant), where moving the key's items away hurts.
	WhileHeld Point = "while-held"
)

// Kind is a timed fault's kind.
type Kind string

const (
	Crash     Kind = "crash"     // Node crashes; restarts after For (0: never). Wipe: restarts empty (amnesia). BlackHole: while down it does not answer (clients time out) rather than refuse at once.
	Partition Kind = "partition" // cut Nodes+Hosts from everyone else for For; OneWay: only messages leaving the group are cut
	Clog      Kind = "clog"      // messages to and from Node are held back until For has passed
	ClockJump Kind = "jump"      // process (Target, Index) clock jumps by Delta (negative: backwards)
	Pause     Kind = "pause"     // Client stops running for For (a GC or VM pause); Point in-acquire: before one of its server calls inside Acquire, at or after At; before-delete: before its next delete inside Acquire
	Topology  Kind = "topology"  // the key's topology becomes Nodes (in that order), or on a ring the ring's members do; For > 0: for that long, then what it was returns (Nodes may then be empty: a ring rebalancing or bootstrapping); Spread > 0: each client learns of it at its own moment within Spread (stale caches); Point while-held: at the first grant at or after At, if no lock is held then
)

// Event is one timed fault. Fields beyond At and Kind are used per kind as
// documented on the Kind constants; unused ones stay zero.
type Event struct {
	At     time.Duration `json:"at"`
	Kind   Kind          `json:"kind"`
	Node   int           `json:"node,omitempty"`
	Client int           `json:"client,omitempty"`
	Target ProcessKind   `json:"target,omitempty"`
	Index  int           `json:"index,omitempty"`
	Nodes  []int         `json:"nodes,omitempty"`
	Hosts  []int         `json:"hosts,omitempty"`
	For    time.Duration `json:"for,omitempty"`
	Delta  time.Duration `json:"delta,omitempty"`
	Wipe   bool          `json:"wipe,omitempty"`
	OneWay bool          `json:"one_way,omitempty"`
	Point  Point         `json:"point,omitempty"`
	// Spread: a topology change reaches the clients' caches over this long.
	Spread time.Duration `json:"spread,omitempty"`
	// BlackHole: a crashed node's requests go unanswered.
	BlackHole bool `json:"black_hole,omitempty"`
}

// Class names a family of faults; generators draw only from the classes
// they are given, and the comparison matrix has one column per class.
type Class string

const (
	ClassNone      Class = "none"
	ClassLoss      Class = "loss"      // message loss and duplication
	ClassAmbiguous Class = "ambiguous" // replies lost after the request was applied
	ClassCrash     Class = "crash"     // node crash and restart, data kept
	ClassAmnesia   Class = "amnesia"   // node crash and restart with data lost
	ClassPartition Class = "partition" // partitions (incl. one-way) and clogs
	ClassSkew      Class = "skew"      // clock offset and drift
	ClassJump      Class = "jump"      // clock jumps
	ClassLocalTime Class = "localtime" // hosts' DateTime.Now in local time zones, with daylight-saving changes
	ClassPause     Class = "pause"     // client pauses, timed and at fault points
	ClassThreads   Class = "threads"   // several client threads share a host
	ClassTopology  Class = "topology"  // the key moves to other nodes
	ClassAll       Class = "all"       // every class above
)

// Classes lists every class in matrix order.
var Classes = []Class{ClassNone, ClassLoss, ClassAmbiguous, ClassCrash, ClassAmnesia,
	ClassPartition, ClassSkew, ClassJump, ClassLocalTime, ClassPause, ClassThreads, ClassTopology, ClassAll}

// NodeDriftsAtEdge is p, in a world of nodes nodes, with, in half the seeds whose plan draws drift
// within a bound (bd.ClockRateDiffMaxPPM, not broken on purpose, no
// clock-error bound), every node's clock at one edge of the bound: all of
// them that much fast, or slow, against true time, which is the clients'
// clock. The swarm draws each drift apart, so a bug that needs the nodes
// that grant a lock to run fast together (a validity without a drift
// margin, over a majority of Redlock's masters) shows within a few
// hundred seeds only so. It draws from a stream of its own; host clocks
// are left as they are.
func NodeDriftsAtEdge(seed uint64, p Plan, bd Bounds, nodes int) Plan {
	w := bd.ClockRateDiffMaxPPM
	if w <= 0 || bd.ClockErrorMax > 0 || slices.Contains(bd.Break, BreakClockRate) {
		return p
	}
	drifting := false
	for _, c := range p.Clocks {
		drifting = drifting || c.DriftPPM != 0
	}
	r := rand.New(rand.NewPCG(seed, 0x65646765))
	if !drifting || r.IntN(2) == 0 {
		return p
	}
	edge := w
	if r.IntN(2) == 0 {
		edge = -w
	}
	clocks := slices.Clone(p.Clocks)
	set := map[int]bool{}
	for i, c := range clocks {
		if c.Kind == NodeProcess {
			clocks[i].DriftPPM = edge
			set[c.Index] = true
		} else if c.DriftPPM*edge < 0 {
			clocks[i].DriftPPM = 0 // one band, holding zero and the edge
		}
	}
	for n := range nodes {
		if !set[n] {
			clocks = append(clocks, Clock{Kind: NodeProcess, Index: n, DriftPPM: edge})
		}
	}
	p.Clocks = clocks
	return p
}
