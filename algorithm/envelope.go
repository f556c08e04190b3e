package algorithm

import (
	"fmt"
	"strings"
	"time"
)

// Property is something a lock promises its users. Properties combine as
// a set: MutualExclusion | ResourceSafety.
type Property uint8

const (
	// MutualExclusion, at the lock level: no two clients ever believe they
	// hold the lock at the same instant.
	MutualExclusion Property = 1 << iota
	// ResourceSafety, at the effect level: the resource the lock protects
	// never loses an update (its accesses linearize as atomic increments),
	// and the lock never destroys the application's data in the DHT. A
	// fenced lock promises this without promising MutualExclusion.
	ResourceSafety
	// Liveness: once every fault has healed, a client that keeps trying is
	// granted the lock within the checker's bound (three TTLs by default).
	Liveness

	// AllProperties is what a lock promises unless it says otherwise.
	AllProperties = MutualExclusion | ResourceSafety | Liveness
)

var propertyNames = []struct {
	p    Property
	name string
}{{MutualExclusion, "mutual exclusion"}, {ResourceSafety, "resource safety"}, {Liveness, "liveness"}}

// Has reports whether every property of q is in p.
func (p Property) Has(q Property) bool { return p&q == q }

// String lists the properties: "mutual exclusion, resource safety".
func (p Property) String() string {
	var names []string
	for _, n := range propertyNames {
		if p.Has(n.p) {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

// Envelope is what a variant promises and what it needs of the world for
// the promise to hold: the conditions under which a violation is a bug of
// the variant rather than the price of a broken assumption. It is data:
// the generators draw worlds inside it (up to its edges) or beyond it on
// purpose, and every finding is classified by which of its assumptions the
// run actually broke.
//
// The zero Envelope promises every property and assumes nothing: a
// variant that states no envelope is held to the strictest standard.
type Envelope struct {
	// Promises are the properties the variant claims; zero means
	// AllProperties.
	Promises Property
	// Safety is what mutual exclusion and resource safety rely on. Liveness
	// relies on it too.
	Safety Assumptions
	// Liveness is what liveness relies on besides Safety.
	Liveness Assumptions
}

// Promised is the set of properties the variant claims.
func (e Envelope) Promised() Property {
	if e.Promises == 0 {
		return AllProperties
	}
	return e.Promises
}

// Needs reports whether either set of assumptions has the deployment
// requirement that f selects (e.g. func(a Assumptions) bool { return
// a.RestartQuarantine }).
func (e Envelope) Needs(f func(Assumptions) bool) bool { return f(e.Safety) || f(e.Liveness) }

// Quarantined reports whether the variant needs restarted nodes kept from
// lock writes for one TTL; the simulated deployment then provides it.
func (e Envelope) Quarantined() bool {
	return e.Needs(func(a Assumptions) bool { return a.RestartQuarantine })
}

// Fenced reports whether the variant needs the resource to check its
// fencing tokens; the simulated resource then does.
func (e Envelope) Fenced() bool {
	return e.Needs(func(a Assumptions) bool { return a.ResourceChecksTokens })
}

// Assumptions are conditions on the world. The zero value assumes nothing;
// each field says what its zero value means. Units are in the names.
type Assumptions struct {
	// ClockErrorMax bounds how far apart any two clocks read at any instant
	// of a run, true time counting as a clock: the post's "a system that
	// share a clock (or synchronize clocks)". Zero: not assumed.
	ClockErrorMax time.Duration
	// ClockRateDiffMaxPPM bounds how much faster any clock runs than any
	// other, true time counting as a clock, in parts per million: the drift
	// a validity margin absorbs. Zero: not assumed.
	ClockRateDiffMaxPPM int64
	// NoClockJumps: no clock ever steps. ClockJumpMax, when positive,
	// tolerates steps up to that size instead.
	NoClockJumps bool
	// ClockJumpMax bounds the size of any clock step, either direction.
	// Zero: not assumed (unless NoClockJumps).
	ClockJumpMax time.Duration
	// UseWithinValidity: a holder's accesses to the resource arrive while
	// its grant is still valid. No pause or message delay between its last
	// validity check and an access may outlast the validity it has left.
	UseWithinValidity bool
	// FixedTopologyWhileHeld: the key's replica set does not change from
	// the moment an acquire that is granted begins until its hold ends.
	FixedTopologyWhileHeld bool
	// DurableNodes: no node ever restarts without its data.
	DurableNodes bool
	// RestartQuarantine: the deployment keeps a restarted node from taking
	// lock writes for one TTL (Redlock's "delayed restarts"). The simulated
	// deployment provides it unless a plan breaks it on purpose.
	RestartQuarantine bool
	// ResourceChecksTokens: the protected resource refuses a fencing token
	// older than the newest it has seen. The simulated resource does unless
	// a plan breaks it on purpose.
	ResourceChecksTokens bool
	// MessageLossMaxPPM bounds the steady probability that a message is
	// lost, in parts per million: a request, or a reply, whether dropped on
	// the way or after its request was applied. Zero: not assumed.
	MessageLossMaxPPM int64
	// NoDuplication: no message is delivered twice (a client's connection
	// to a node is TCP, and clients do not resend).
	NoDuplication bool
	// ReplicationMin: the key is on at least this many nodes, as deployed
	// and after any topology change. Zero: not assumed.
	ReplicationMin int
	// ReservedLockNames: the application keeps no data of its own under a
	// lock's item name (<key>_lock): the DHT's namespace is shared.
	ReservedLockNames bool
}

// IsZero reports whether a assumes nothing.
func (a Assumptions) IsZero() bool { return a == Assumptions{} }

// And is what a and b assume together: every assumption of either, the
// tighter bound where both bound the same thing.
func (a Assumptions) And(b Assumptions) Assumptions {
	tighter := func(x, y int64) int64 {
		if x == 0 || (y != 0 && y < x) {
			return y
		}
		return x
	}
	return Assumptions{
		ClockErrorMax:          time.Duration(tighter(int64(a.ClockErrorMax), int64(b.ClockErrorMax))),
		ClockRateDiffMaxPPM:    tighter(a.ClockRateDiffMaxPPM, b.ClockRateDiffMaxPPM),
		NoClockJumps:           a.NoClockJumps || b.NoClockJumps,
		ClockJumpMax:           time.Duration(tighter(int64(a.ClockJumpMax), int64(b.ClockJumpMax))),
		UseWithinValidity:      a.UseWithinValidity || b.UseWithinValidity,
		FixedTopologyWhileHeld: a.FixedTopologyWhileHeld || b.FixedTopologyWhileHeld,
		DurableNodes:           a.DurableNodes || b.DurableNodes,
		RestartQuarantine:      a.RestartQuarantine || b.RestartQuarantine,
		ResourceChecksTokens:   a.ResourceChecksTokens || b.ResourceChecksTokens,
		MessageLossMaxPPM:      tighter(a.MessageLossMaxPPM, b.MessageLossMaxPPM),
		NoDuplication:          a.NoDuplication || b.NoDuplication,
		ReplicationMin:         max(a.ReplicationMin, b.ReplicationMin),
		ReservedLockNames:      a.ReservedLockNames || b.ReservedLockNames,
	}
}

// Assumption names one kind of assumption, one field of Assumptions (or
// NoClockJumps and ClockJumpMax together): how reports, findings and the
// -beyond flag refer to it.
type Assumption string

const (
	ClockError        Assumption = "clock-error"
	ClockRate         Assumption = "clock-rate"
	ClockJumps        Assumption = "clock-jumps"
	UseWithinValidity Assumption = "use-within-validity"
	FixedTopology     Assumption = "fixed-topology"
	DurableNodes      Assumption = "durable-nodes"
	RestartQuarantine Assumption = "restart-quarantine"
	TokenChecks       Assumption = "token-checks"
	MessageLoss       Assumption = "message-loss"
	NoDuplication     Assumption = "no-duplication"
	ReplicationMin    Assumption = "replication-min"
	ReservedLockNames Assumption = "reserved-lock-names"
)

// EveryAssumption lists every kind, in field order.
var EveryAssumption = []Assumption{ClockError, ClockRate, ClockJumps, UseWithinValidity,
	FixedTopology, DurableNodes, RestartQuarantine, TokenChecks, MessageLoss, NoDuplication, ReplicationMin, ReservedLockNames}

// Names lists the assumptions a makes, in field order.
func (a Assumptions) Names() []Assumption {
	var out []Assumption
	for _, n := range EveryAssumption {
		if a.Makes(n) {
			out = append(out, n)
		}
	}
	return out
}

// Makes reports whether a makes assumption n.
func (a Assumptions) Makes(n Assumption) bool {
	switch n {
	case ClockError:
		return a.ClockErrorMax > 0
	case ClockRate:
		return a.ClockRateDiffMaxPPM > 0
	case ClockJumps:
		return a.NoClockJumps || a.ClockJumpMax > 0
	case UseWithinValidity:
		return a.UseWithinValidity
	case FixedTopology:
		return a.FixedTopologyWhileHeld
	case DurableNodes:
		return a.DurableNodes
	case RestartQuarantine:
		return a.RestartQuarantine
	case TokenChecks:
		return a.ResourceChecksTokens
	case MessageLoss:
		return a.MessageLossMaxPPM > 0
	case NoDuplication:
		return a.NoDuplication
	case ReplicationMin:
		return a.ReplicationMin > 0
	case ReservedLockNames:
		return a.ReservedLockNames
	}
	return false
}

// Phrase says in words what a assumes under n ("" if it makes no such
// assumption).
func (a Assumptions) Phrase(n Assumption) string {
	if !a.Makes(n) {
		return ""
	}
	switch n {
	case ClockError:
		return fmt.Sprintf("clocks agree within %s", a.ClockErrorMax)
	case ClockRate:
		return fmt.Sprintf("clock rates differ by at most %d ppm", a.ClockRateDiffMaxPPM)
	case ClockJumps:
		if a.NoClockJumps {
			return "no clock jumps"
		}
		return fmt.Sprintf("clock jumps of at most %s", a.ClockJumpMax)
	case UseWithinValidity:
		return "no pause or delay outlasts the validity a holder has left before it uses the resource"
	case FixedTopology:
		return "the key's nodes do not change while a lock is held"
	case DurableNodes:
		return "nodes never lose their data"
	case RestartQuarantine:
		return "a restarted node takes no lock writes for one TTL"
	case TokenChecks:
		return "the resource checks every fencing token"
	case MessageLoss:
		return fmt.Sprintf("at most %s of messages lost", ppmPercent(a.MessageLossMaxPPM))
	case NoDuplication:
		return "no message is delivered twice"
	case ReplicationMin:
		return fmt.Sprintf("the key is on at least %d nodes", a.ReplicationMin)
	case ReservedLockNames:
		return "no application data under a lock's item name"
	}
	return ""
}

// Describe lists the assumptions as short phrases, in field order.
func (a Assumptions) Describe() []string {
	var out []string
	for _, n := range a.Names() {
		out = append(out, a.Phrase(n))
	}
	return out
}

// ParseAssumption reads an assumption's name.
func ParseAssumption(s string) (Assumption, error) {
	for _, n := range EveryAssumption {
		if string(n) == s {
			return n, nil
		}
	}
	names := make([]string, len(EveryAssumption))
	for i, n := range EveryAssumption {
		names[i] = string(n)
	}
	return "", fmt.Errorf("unknown assumption %q (known: %s)", s, strings.Join(names, ", "))
}

// Assumes reports whether the envelope makes assumption n, for safety or
// for liveness.
func (e Envelope) Assumes(n Assumption) bool { return e.Safety.Makes(n) || e.Liveness.Makes(n) }

// Assumed lists every assumption the envelope makes, safety's first, each
// once.
func (e Envelope) Assumed() []Assumption {
	out := e.Safety.Names()
	for _, n := range e.Liveness.Names() {
		if !e.Safety.Makes(n) {
			out = append(out, n)
		}
	}
	return out
}

// ppmPercent writes parts per million as a percentage: 20000 → "2%".
func ppmPercent(ppm int64) string {
	s := fmt.Sprintf("%.4f", float64(ppm)/10_000)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// String is the envelope as one line of prose, for help and reports:
// "promises mutual exclusion, resource safety, liveness; safe if clock
// rates differ by at most 10000 ppm, no clock jumps; live if ...".
func (e Envelope) String() string {
	s := "promises " + e.Promised().String()
	if safety := e.Safety.Describe(); len(safety) > 0 {
		s += "; safe if " + strings.Join(safety, ", ")
	} else {
		s += "; assumes nothing for safety"
	}
	if e.Promised().Has(Liveness) {
		if live := e.Liveness.Describe(); len(live) > 0 {
			s += "; live if also " + strings.Join(live, ", ")
		}
	}
	return s
}
