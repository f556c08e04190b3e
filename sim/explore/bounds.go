package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
)

// Bounds is what the target's seeds draw within: its variant's envelope,
// safety's and liveness's assumptions together, reaching their edges, and
// crossing those named in Beyond on purpose.
func (t Target) Bounds() faults.Bounds {
	e := t.Variant.Envelope
	a := e.Safety.And(e.Liveness)
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
		bd.LossMaxPPM = faults.PPM(max(1, int64(bd.LossMaxPPM)-lateOf(t.Config)))
	}
	if a.UseWithinValidity {
		// The longest the access after a pause can take to reach the
		// resource, besides the plan's extra latency (which the generator
		// adds): the config's slowest message.
		bd.ValidityEdge = t.Config.LatencyMax + t.Config.LatencyTail
	}
	for _, n := range t.Beyond {
		bd.Break = append(bd.Break, faults.Breakable(n))
	}
	return bd
}

// validateBeyond checks that every assumption Beyond names is one the
// variant makes and the target's classes can break.
func (t Target) validateBeyond() error {
	assumed := t.Variant.Envelope.Assumed()
	for _, n := range t.Beyond {
		if _, err := algorithm.ParseAssumption(string(n)); err != nil {
			return err
		}
		if !t.Variant.Envelope.Assumes(n) {
			return fmt.Errorf("%s does not assume %s, so there is nothing to break (it assumes: %s)",
				t.Variant.Name, n, strings.ReplaceAll(assumptionList(assumed), ",", ", "))
		}
		if n == algorithm.ReplicationMin && !slices.Contains(t.World, WorldReplication) {
			return fmt.Errorf("breaking %s takes a world that draws its replication (-world with replication in it, and no -replication pin)", n)
		}
		if n == algorithm.ReservedLockNames && !slices.Contains(t.World, WorldData) {
			return fmt.Errorf("breaking %s takes a world that draws the application's data (-world with data in it)", n)
		}
		if class := faults.Breakable(n).ClassOf(); !worldBroken(n) && !faults.Allow(t.Classes...).Has(class) {
			return fmt.Errorf("breaking %s takes faults of class %s, which the target's classes (%s) leave out",
				n, class, faults.Allow(t.Classes...))
		}
	}
	return t.Bounds().Validate(faults.Allow(t.Classes...))
}

// assumptionList is the names as -beyond reads them: "clock-rate,clock-jumps".
func assumptionList(ns []algorithm.Assumption) string {
	if len(ns) == 0 {
		return "nothing"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ",")
}

// BeyondAll is every assumption t's variant makes that t's classes can
// break: what "-beyond all" asks for.
func (t Target) BeyondAll() []algorithm.Assumption {
	var out []algorithm.Assumption
	allowed := faults.Allow(t.Classes...)
	for _, n := range t.Variant.Envelope.Assumed() {
		if n == algorithm.ReplicationMin {
			if slices.Contains(t.World, WorldReplication) {
				out = append(out, n)
			}
			continue
		}
		if n == algorithm.ReservedLockNames {
			if slices.Contains(t.World, WorldData) {
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
