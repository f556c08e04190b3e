package envelope

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// Edges are what a target's seeds draw up to: its variant's envelope, the
// world it draws in (Config, and the fields of it each seed draws, World),
// its fault classes, and the assumptions it breaks on purpose (Beyond). A
// seed's world (WorldAt) and its plan's bounds (BoundsAt) are drawn from
// them, the same for the same seed.
type Edges struct {
	Variant  string // the variant's name, for errors
	Envelope algorithm.Envelope
	Config   sim.Config
	Classes  []faults.Class
	Beyond   []algorithm.Assumption
	World    []WorldField
}

// Bounds is what the target's liveness seeds draw within: its variant's
// envelope, safety's and liveness's assumptions together, reaching their
// edges, and crossing those named in Beyond on purpose.
func (e Edges) Bounds() faults.Bounds {
	return e.boundsOf(e.Envelope.Safety.And(e.Envelope.Liveness))
}

// SafetyBounds is what the target's safety seeds draw within: the safety
// assumptions only, so that no liveness assumption narrows the search
// for a safety bug (a safety bug that shows only where a liveness
// assumption breaks, such as a late unlock delivered twice, is reached).
func (e Edges) SafetyBounds() faults.Bounds {
	return e.boundsOf(e.Envelope.Safety)
}

// BoundsAt is what seed draws within: odd seeds search liveness as well
// as safety (Bounds), even seeds safety alone (SafetyBounds), where a
// run's liveness is judged only until it breaks a liveness assumption
// (its findings classified by its Breaches). For a variant whose liveness
// assumes nothing more than its safety, both are the same.
//
// Every seed once drew inside both: under redlock's envelope no
// duplication was ever drawn, and a lock whose failed attempt's late
// unlock deleted its retry's item went unflagged there.
func (e Edges) BoundsAt(seed uint64) faults.Bounds {
	if SearchesLiveness(seed) || len(e.Beyond) > 0 {
		return e.Bounds()
	}
	return e.SafetyBounds()
}

// SearchesLiveness reports whether seed draws inside the liveness
// assumptions too (BoundsAt): odd seeds do.
func SearchesLiveness(seed uint64) bool { return seed%2 == 1 }

// drawnAssumptions are the assumptions seed draws inside (BoundsAt). A
// target that breaks assumptions on purpose (Beyond) draws every seed
// inside both, and breaks those.
func (e Edges) drawnAssumptions(seed uint64) algorithm.Assumptions {
	if SearchesLiveness(seed) || len(e.Beyond) > 0 {
		return e.Envelope.Safety.And(e.Envelope.Liveness)
	}
	return e.Envelope.Safety
}

// boundsOf is the fault bounds of assumptions a, with e's Beyond broken.
func (e Edges) boundsOf(a algorithm.Assumptions) faults.Bounds {
	bd := faults.Bounds{
		ClockErrorMax:       a.ClockErrorMax,
		ClockRateDiffMaxPPM: a.ClockRateDiffMaxPPM,
		NoClockJumps:        a.NoClockJumps,
		ClockJumpMax:        a.ClockJumpMax,
		NoWipes:             a.DurableNodes,
		NoTopology:          a.FixedTopologyWhileHeld,
		LossMaxPPM:          faults.PPM(min(a.MessageLossMaxPPM, int64(faults.Million))),
		Quarantined:         a.RestartQuarantine,
		Fenced:              a.ResourceChecksTokens,
		ReplicationMin:      a.ReplicationMin,
		NoDuplicates:        a.NoDuplication,
		ReservedLockNames:   a.ReservedLockNames,
	}
	if bd.LossMaxPPM > 0 {
		// Replies after the RPC timeout are lost to the client too: the
		// world's late round trips take their share of the loss bound, and
		// the plan may lose only the rest. Drawn to the edge each, a slow
		// client and steady loss together lost twice the bound, and starved
		// waiters (found by locksim: corrected, seed 70638 of class all).
		bd.LossMaxPPM = faults.PPM(max(1, int64(bd.LossMaxPPM)-lateOf(e.Config)))
	}
	bd.ExtraLatencyMax = extraLatencyMax(e.Config, bd.LossMaxPPM > 0)
	if a.UseWithinValidity {
		// The longest the access after a pause can take to reach the
		// resource, besides the plan's extra latency (which the generator
		// adds): the config's slowest message.
		bd.ValidityEdge = e.Config.LatencyMax + e.Config.LatencyTail
	}
	for _, n := range e.Beyond {
		bd.Break = append(bd.Break, faults.Breakable(n))
	}
	return bd
}

// extraLatencyMax is the most extra latency a plan inside the envelope
// adds to a message. Within a loss bound (lossBounded), none of it may make
// a round trip late: two legs of it fit the slack a round trip has before
// the RPC timeout. Otherwise it may fill the slack, and make up to half
// of the round trips late: a reply after the timeout is a lost one, and a
// network that loses more than half of them leaves no lock live, while
// the liveness judge holds every lock to a network that loses some
// (sim's reach). It was a second (most round trips late) while liveness
// was not judged at all under extra latency.
func extraLatencyMax(c sim.Config, lossBounded bool) time.Duration {
	slack := c.RPCTimeout - 2*c.LatencyMax
	if lossBounded {
		// The slow link's legs come first: what is left of the slack,
		// shared by two legs, so the world's late share stays its own.
		slack = (slack - 2*c.SlowExtra) / 2
	}
	return max(slack, time.Millisecond)
}

// ValidateBeyond checks that every assumption Beyond names is one the
// variant makes and the target's classes can break, and that the bounds
// fit the classes.
func (e Edges) ValidateBeyond() error {
	assumed := e.Envelope.Assumed()
	for _, n := range e.Beyond {
		if _, err := algorithm.ParseAssumption(string(n)); err != nil {
			return err
		}
		if !e.Envelope.Assumes(n) {
			return fmt.Errorf("%s does not assume %s, so there is nothing to break (it assumes: %s)",
				e.Variant, n, strings.ReplaceAll(AssumptionList(assumed), ",", ", "))
		}
		if n == algorithm.ReplicationMin && !slices.Contains(e.World, WorldReplication) {
			return fmt.Errorf("breaking %s takes a world that draws its replication (-world with replication in it, and no -replication pin)", n)
		}
		if n == algorithm.ReservedLockNames && !slices.Contains(e.World, WorldData) {
			return fmt.Errorf("breaking %s takes a world that draws the application's data (-world with data in it)", n)
		}
		if class := faults.Breakable(n).ClassOf(); !worldBroken(n) && !faults.Allow(e.Classes...).Has(class) {
			return fmt.Errorf("breaking %s takes faults of class %s, which the target's classes (%s) leave out",
				n, class, faults.Allow(e.Classes...))
		}
	}
	return e.Bounds().Validate(faults.Allow(e.Classes...))
}

// AssumptionList is the names as -beyond reads them: "clock-rate,clock-jumps"
// ("nothing" for none).
func AssumptionList(ns []algorithm.Assumption) string {
	if len(ns) == 0 {
		return "nothing"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ",")
}

// BeyondAll is every assumption e's variant makes that e's classes (and
// world) can break: what "-beyond all" asks for.
func (e Edges) BeyondAll() []algorithm.Assumption {
	var out []algorithm.Assumption
	allowed := faults.Allow(e.Classes...)
	for _, n := range e.Envelope.Assumed() {
		if n == algorithm.ReplicationMin {
			if slices.Contains(e.World, WorldReplication) {
				out = append(out, n)
			}
			continue
		}
		if n == algorithm.ReservedLockNames {
			if slices.Contains(e.World, WorldData) {
				out = append(out, n)
			}
			continue
		}
		if allowed.Has(faults.Breakable(n).ClassOf()) {
			out = append(out, n)
		}
	}
	return out
}

// worldBroken reports whether the world a seed draws, not its plan, breaks
// assumption n.
func worldBroken(n algorithm.Assumption) bool {
	return n == algorithm.ReplicationMin || n == algorithm.ReservedLockNames
}
