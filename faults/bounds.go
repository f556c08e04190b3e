package faults

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bounds keep a generator inside a variant's envelope, up to its edges: a
// drift bound is met by drifts at the bound as well as under it, a pause
// sized by the validity ends just before the validity does. Break names the
// bounds a draw crosses on purpose instead. The zero Bounds bound nothing:
// the plain swarm draw.
//
// Bounds is the generators' side of algorithm.Envelope (sim/envelope
// converts one into the other, Edges.Bounds); the names in Break are the envelope's
// assumption names.
type Bounds struct {
	// ClockErrorMax, when positive, keeps every clock within half of it of
	// true time for the whole run (offset, drift and jumps together), so any
	// two read at most ClockErrorMax apart.
	ClockErrorMax time.Duration
	// ClockRateDiffMaxPPM, when positive, draws every drift from one band
	// this wide that contains zero, so any two clocks (true time too) run at
	// most this many ppm apart.
	ClockRateDiffMaxPPM int64
	// NoClockJumps draws no jumps; else ClockJumpMax, when positive, bounds
	// their size.
	NoClockJumps bool
	ClockJumpMax time.Duration
	// ValidityEdge, when positive, sizes every fault-point pause by the
	// holder's validity (Points.UntilValidityLeft) and leaves at least this
	// much of it, plus the plan's extra latency: the longest a message can
	// take, so the access after the pause lands in time.
	ValidityEdge time.Duration
	// NoWipes draws no crash that loses data; NoTopology no topology change.
	NoWipes    bool
	NoTopology bool
	// LossMaxPPM, when positive, bounds steady message loss: requests lost
	// and replies lost, by loss or after their request was applied
	// (ReplyLost), each at most this often.
	LossMaxPPM PPM
	// ExtraLatencyMax, when positive, is the most extra latency a plan
	// may add to a message (Network.ExtraLatencyMax; a second when zero).
	// A reply later than the client's RPC timeout is a lost one, so the
	// caller, who knows the timeout, keeps the share of late round trips
	// in check this way: within a loss bound, or at most half of them.
	// Breaking message-loss lifts it.
	ExtraLatencyMax time.Duration
	// NoDuplicates draws no duplication.
	NoDuplicates bool
	// Quarantined and Fenced say the variant relies on the deployment's
	// restart quarantine and token checks: only then can a draw break them
	// (Deployment.NoQuarantine, NoFencing).
	Quarantined, Fenced bool
	// ReservedLockNames says the variant assumes no application data under
	// its lock's name: only the world breaks it (explore draws the data).
	ReservedLockNames bool
	// ReplicationMin, when positive, keeps every ring a topology change
	// draws at this many members or more. (The world's replication is
	// drawn by the caller: explore keeps it at ReplicationMin or above,
	// and breaks it there.)
	ReplicationMin int

	// Break lists what this draw crosses on purpose. Each seed breaks a
	// random non-empty subset of those the classes let it break, and keeps
	// the others.
	Break []Breakable
}

// Breakable names a bound a draw can cross: the envelope assumption it
// enforces.
type Breakable string

const (
	BreakClockError        Breakable = "clock-error"         // clock offsets beyond ClockErrorMax
	BreakClockRate         Breakable = "clock-rate"          // drift beyond the band
	BreakClockJumps        Breakable = "clock-jumps"         // jumps, or larger ones
	BreakUseWithinValidity Breakable = "use-within-validity" // fault-point pauses past the validity
	BreakFixedTopology     Breakable = "fixed-topology"      // topology changes
	BreakDurableNodes      Breakable = "durable-nodes"       // crashes that lose data
	BreakRestartQuarantine Breakable = "restart-quarantine"  // no quarantine, and crashes that lose data
	BreakTokenChecks       Breakable = "token-checks"        // no token checks, and pauses past the validity
	BreakMessageLoss       Breakable = "message-loss"        // loss above LossMaxPPM
	BreakNoDuplication     Breakable = "no-duplication"      // duplicated messages
	BreakReplicationMin    Breakable = "replication-min"     // fewer replicas: the world's replication, or a ring that shrinks
	BreakReservedLockNames Breakable = "reserved-lock-names" // the world's application data under the lock's name
)

// breakables lists every Breakable with the class a draw needs to cross it.
var breakables = []struct {
	b     Breakable
	class Class
}{
	{BreakClockError, ClassSkew}, {BreakClockRate, ClassSkew}, {BreakClockJumps, ClassJump},
	{BreakUseWithinValidity, ClassPause}, {BreakFixedTopology, ClassTopology},
	{BreakDurableNodes, ClassAmnesia}, {BreakRestartQuarantine, ClassAmnesia},
	{BreakTokenChecks, ClassPause}, {BreakMessageLoss, ClassLoss}, {BreakNoDuplication, ClassLoss},
	// The world's replication breaks it, drawn under the classes whose
	// worlds draw replication (envelope.DefaultWorld); topology is one.
	{BreakReplicationMin, ClassTopology},
	{BreakReservedLockNames, ClassAll},
}

// ParseBreakable reads a Breakable's name.
func ParseBreakable(s string) (Breakable, error) {
	for _, x := range breakables {
		if string(x.b) == s {
			return x.b, nil
		}
	}
	names := make([]string, len(breakables))
	for i, x := range breakables {
		names[i] = string(x.b)
	}
	return "", fmt.Errorf("faults: %q cannot be broken (known: %s)", s, strings.Join(names, ", "))
}

// ClassOf is the class a draw needs to cross b.
func (b Breakable) ClassOf() Class {
	for _, x := range breakables {
		if x.b == b {
			return x.class
		}
	}
	return ""
}

// bounded reports whether the bounds constrain b at all (a draw can only
// cross a bound there is).
func (bd Bounds) bounded(b Breakable) bool {
	switch b {
	case BreakClockError:
		return bd.ClockErrorMax > 0
	case BreakClockRate:
		return bd.ClockRateDiffMaxPPM > 0
	case BreakClockJumps:
		return bd.NoClockJumps || bd.ClockJumpMax > 0
	case BreakUseWithinValidity:
		return bd.ValidityEdge > 0
	case BreakFixedTopology:
		return bd.NoTopology
	case BreakDurableNodes:
		return bd.NoWipes
	case BreakRestartQuarantine:
		return bd.Quarantined
	case BreakTokenChecks:
		return bd.Fenced
	case BreakMessageLoss:
		return bd.LossMaxPPM > 0
	case BreakNoDuplication:
		return bd.NoDuplicates
	case BreakReplicationMin:
		return bd.ReplicationMin > 0
	case BreakReservedLockNames:
		return bd.ReservedLockNames
	}
	return false
}

// Validate reports the first bound that makes no sense, or a Break that
// crosses no bound or needs a class not in a.
func (bd Bounds) Validate(a Allowed) error {
	switch {
	case bd.ClockErrorMax < 0:
		return fmt.Errorf("bounds: clock error %v is negative", bd.ClockErrorMax)
	case bd.ClockRateDiffMaxPPM < 0:
		return fmt.Errorf("bounds: clock rate difference %d ppm is negative", bd.ClockRateDiffMaxPPM)
	case bd.ClockJumpMax < 0:
		return fmt.Errorf("bounds: clock jump %v is negative", bd.ClockJumpMax)
	case bd.ValidityEdge < 0:
		return fmt.Errorf("bounds: validity edge %v is negative", bd.ValidityEdge)
	case bd.LossMaxPPM > Million:
		return fmt.Errorf("bounds: loss %d ppm exceeds %d", bd.LossMaxPPM, Million)
	}
	for _, b := range bd.Break {
		class := b.ClassOf()
		switch {
		case class == "":
			_, err := ParseBreakable(string(b))
			return err
		case !bd.bounded(b):
			return fmt.Errorf("bounds: nothing bounds %s, so nothing can break it", b)
		case b == BreakReplicationMin || b == BreakReservedLockNames:
			// The world breaks it (its replication, its data), whatever the classes.
		case !a.Has(class):
			return fmt.Errorf("bounds: breaking %s needs fault class %s, not in %s", b, class, a)
		}
	}
	return nil
}

// mustValidate panics on bounds a generator cannot draw within: it has no
// error to return.
func (bd Bounds) mustValidate(a Allowed) {
	if err := bd.Validate(a); err != nil {
		panic("faults: " + err.Error())
	}
}

// breakSet is the set of bounds one draw crosses, a bit per position in
// breakables.
type breakSet uint16

func breakBit(b Breakable) breakSet {
	for i, x := range breakables {
		if x.b == b {
			return 1 << i
		}
	}
	return 0
}

func (s breakSet) has(b Breakable) bool { return s&breakBit(b) != 0 }

// forbids reports whether the bounds keep feature f out of a draw that does
// not break them.
func (bd Bounds) forbids(f feature, br breakSet) bool {
	switch f {
	case featJump:
		return bd.NoClockJumps && !br.has(BreakClockJumps)
	case featAmnesia:
		return bd.NoWipes && !br.has(BreakDurableNodes) && !br.has(BreakRestartQuarantine)
	case featTopology:
		return bd.NoTopology && !br.has(BreakFixedTopology)
	case featDuplicate:
		return bd.NoDuplicates && !br.has(BreakNoDuplication)
	}
	return false
}

// forces is the feature a draw that crosses b must switch on (numFeatures:
// none, the world crosses it).
func forces(b Breakable) feature {
	switch b {
	case BreakClockError:
		return featOffset
	case BreakClockRate:
		return featDrift
	case BreakClockJumps:
		return featJump
	case BreakUseWithinValidity, BreakTokenChecks:
		return featPoints
	case BreakFixedTopology:
		return featTopology
	case BreakDurableNodes, BreakRestartQuarantine:
		return featAmnesia
	case BreakMessageLoss:
		return featLoss
	case BreakNoDuplication:
		return featDuplicate
	case BreakReplicationMin, BreakReservedLockNames:
		return numFeatures // the world breaks it, not a fault
	}
	panic("faults: unknown breakable " + string(b))
}

// Excludes names the bounds that leave class c no fault to draw: none when
// some fault of the class stays inside them (or the class draws nothing
// anyway, as none does).
func (bd Bounds) Excludes(c Class) []Breakable {
	a := Allow(c)
	var why []Breakable
	for f := feature(0); f < numWorldFeatures; f++ {
		if !a.permits(f) {
			continue
		}
		if !bd.forbids(f, 0) {
			return nil
		}
		for _, x := range breakables {
			if forces(x.b) == f && bd.bounded(x.b) && !slices.Contains(why, x.b) {
				why = append(why, x.b)
				break
			}
		}
	}
	return why
}

// extraLatencyMax is the most extra latency a draw may add to a message:
// ExtraLatencyMax when set, a second otherwise or when message-loss is
// broken on purpose.
func (bd Bounds) extraLatencyMax(br breakSet) time.Duration {
	if bd.ExtraLatencyMax > 0 && !br.has(BreakMessageLoss) {
		return max(min(bd.ExtraLatencyMax, time.Second), time.Millisecond)
	}
	return time.Second
}
