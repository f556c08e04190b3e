package faults

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"
)

// PlanGen draws plans of the given classes in a world of shape s for
// property-based tests. It draws structurally, so when a property fails
// rapid shrinks the plan toward fault-free: events are deleted, every
// probability and duration shrinks toward zero (or its smallest valid
// value), optional faults switch off. Times are whole milliseconds so a
// shrunk plan reads well. Events are sorted by At. It panics if s is not a
// valid Shape.
func PlanGen(classes []Class, s Shape) *rapid.Generator[Plan] {
	return PlanGenWithin(classes, s, Bounds{})
}

// PlanGenWithin is PlanGen kept inside bd, except for the bounds a plan
// breaks on purpose: a non-empty subset of bd.Break, shrinking toward one.
// A broken bound's fault is always drawn; a kept bound draws its faults
// only up to it (rapid favours the ends of a range, so edges come often).
// With the zero Bounds it is PlanGen. It panics if s or bd is not valid.
func PlanGenWithin(classes []Class, s Shape, bd Bounds) *rapid.Generator[Plan] {
	s.mustValidate()
	a := Allow(classes...)
	bd.mustValidate(a)
	if a == 0 {
		return rapid.Just(Plan{}) // Custom must draw something; there is nothing to draw
	}
	return rapid.Custom(func(t *rapid.T) Plan {
		br := drawBreaks(t, bd)
		var p Plan
		p.Network = drawNetwork(t, a, bd, br)
		if a.permits(featOffset) {
			p.Clocks = drawClocks(t, s, bd, br)
		}
		if a.permits(featZone) && rapid.Bool().Draw(t, "zones") {
			p.Zones = drawZones(t, s)
		}
		if a.permits(featThreads) && rapid.Bool().Draw(t, "threads") {
			p.ThreadsPerHost = rapid.IntRange(2, MaxDrawnThreadsPerHost).Draw(t, "threads_per_host")
		}
		if a.permits(featPoints) && (forced(br, featPoints) || rapid.Bool().Draw(t, "points")) {
			p.Points = drawPoints(t, bd, br, p.Network.ExtraLatencyMax)
		}
		kinds := eventKinds(a, bd, br)
		if p.Points.PausePPM > 0 && bd.keepsValidity(br) {
			// As in Swarm: a timed pause can hold a client waking from a
			// pause sized by its validity past the validity's end.
			kinds = slices.DeleteFunc(kinds, func(f feature) bool { return f == featPause })
		}
		if len(kinds) > 0 {
			// A broken bound's event first, whatever the others: drawn in a
			// fixed place, so shrinking the others never changes how many
			// draws come after them.
			p.Events = forcedEvents(t, kinds, br, s, s.ClientsFor(p), bd)
			ev := eventGen(kinds, s, s.ClientsFor(p), bd, br)
			p.Events = append(p.Events, rapid.SliceOfN(ev, 0, maxSwarmEvents).Draw(t, "events")...)
			slices.SortStableFunc(p.Events, func(a, b Event) int { return cmpDuration(a.At, b.At) })
			if bd.ClockErrorMax > 0 && !br.has(BreakClockError) && !br.has(BreakClockJumps) {
				p.Events = clampJumps(p.Clocks, p.Events, bd, s.Duration)
			}
		}
		p.Deployment = Deployment{NoQuarantine: br.has(BreakRestartQuarantine), NoFencing: br.has(BreakTokenChecks)}
		p.normalize()
		return p
	})
}

// drawBreaks picks the bounds a plan crosses: each of bd.Break or not, at
// least one (rapid shrinks toward the first).
func drawBreaks(t *rapid.T, bd Bounds) breakSet {
	if len(bd.Break) == 0 {
		return 0
	}
	var br breakSet
	for _, b := range bd.Break {
		if rapid.Bool().Draw(t, "break "+string(b)) {
			br |= breakBit(b)
		}
	}
	if br == 0 {
		br = breakBit(bd.Break[0])
	}
	return br
}

// forced reports whether a broken bound needs feature f.
func forced(br breakSet, f feature) bool {
	for _, x := range breakables {
		if br.has(x.b) && forces(x.b) == f {
			return true
		}
	}
	return false
}

// forcedEvents draws one event of every kind a broken bound needs.
func forcedEvents(t *rapid.T, kinds []feature, br breakSet, s Shape, clients int, bd Bounds) []Event {
	var events []Event
	for _, f := range kinds {
		if forced(br, f) {
			events = append(events, eventGen([]feature{f}, s, clients, bd, br).Draw(t, "forced "+f.String()))
		}
	}
	return events
}

func drawNetwork(t *rapid.T, a Allowed, bd Bounds, br breakSet) Network {
	var n Network
	ppm := func(f feature, label string, hi uint32) PPM {
		if !a.permits(f) {
			return 0
		}
		return PPM(rapid.Uint32Range(0, hi).Draw(t, label))
	}
	switch {
	case bd.LossMaxPPM > 0 && br.has(BreakMessageLoss):
		n.LossPPM = PPM(rapid.Uint32Range(uint32(bd.LossMaxPPM)+1, max(uint32(bd.LossMaxPPM)+1, 200_000)).Draw(t, "loss_ppm"))
	case bd.LossMaxPPM > 0:
		n.LossPPM = ppm(featLoss, "loss_ppm", uint32(bd.LossMaxPPM))
	default:
		n.LossPPM = ppm(featLoss, "loss_ppm", 200_000)
	}
	n.DuplicatePPM = ppm(featDuplicate, "duplicate_ppm", 100_000)
	switch {
	case br.has(BreakNoDuplication):
		n.DuplicatePPM = max(n.DuplicatePPM, 1_000) // broken: some duplication, always
	case bd.forbids(featDuplicate, br):
		n.DuplicatePPM = 0
	}
	n.ReplyLossPPM = ppm(featReplyLoss, "reply_loss_ppm", uint32(replyLossMax(bd, br, n.LossPPM)))
	if a.permits(featLatency) {
		n.ExtraLatencyMax = drawMillis(t, "extra_latency_max", 0, int64(bd.extraLatencyMax(br)/time.Millisecond))
	}
	return n
}

// drawClocks draws clocks for distinct processes; offset and drift shrink
// toward a perfect clock, and the list toward none. Kept bounds bound them
// (a drift band holding zero; offsets and drift within half the clock
// error); a broken one is crossed by the first clock.
func drawClocks(t *rapid.T, s Shape, bd Bounds, br breakSet) []Clock {
	offsetMs, driftLo, driftHi := int64(180_000), int64(-200_000), int64(200_000)
	if half := bd.ClockErrorMax / 2; half > 0 && !br.has(BreakClockError) {
		offsetMs = int64(half / time.Millisecond)
	}
	if w := bd.ClockRateDiffMaxPPM; w > 0 && !br.has(BreakClockRate) {
		driftLo = -rapid.Int64Range(0, w).Draw(t, "drift_band")
		driftHi = driftLo + w
	}
	// One yes-or-no per process, then its clock: the same draws whatever
	// the values, so that shrinking (which reorders and drops draws) never
	// meets a plan with more or fewer of them than it expects.
	var clocks []Clock
	for _, k := range []ProcessKind{HostProcess, NodeProcess} {
		for i := range s.processes(k) {
			if !rapid.Bool().Draw(t, fmt.Sprintf("clock %s%d", k, i)) {
				continue
			}
			c := Clock{Kind: k, Index: i}
			c.Offset = time.Millisecond * time.Duration(rapid.Int64Range(-offsetMs, offsetMs).Draw(t, "offset_ms"))
			c.DriftPPM = rapid.Int64Range(driftLo, driftHi).Draw(t, "drift_ppm")
			if half := bd.ClockErrorMax / 2; half > 0 && !br.has(BreakClockError) {
				c.DriftPPM = driftWithin(c.Offset, c.DriftPPM, half, s.Duration)
			}
			clocks = append(clocks, c)
		}
	}
	if len(clocks) == 0 && (br.has(BreakClockError) || br.has(BreakClockRate)) {
		clocks = []Clock{{Kind: HostProcess}} // the broken bound needs a clock
	}
	if len(clocks) > 0 && br.has(BreakClockError) {
		ms := rapid.Int64Range(int64(bd.ClockErrorMax/time.Millisecond)+1, max(int64(bd.ClockErrorMax/time.Millisecond)+1, 180_000)).Draw(t, "broken_offset_ms")
		clocks[0].Offset = time.Millisecond * time.Duration(ms)
	}
	if len(clocks) > 0 && br.has(BreakClockRate) {
		w := bd.ClockRateDiffMaxPPM
		clocks[0].DriftPPM = rapid.Int64Range(w+1, max(w+1, 200_000)).Draw(t, "broken_drift_ppm")
	}
	return clocks
}

// driftWithin narrows a drift so that a clock with this offset stays within
// half of true time until the run ends.
func driftWithin(offset time.Duration, drift int64, half, end time.Duration) int64 {
	perPPM := int64(end)/1_000_000 + 1 // ns the clock moves per ppm by the end
	hi := (int64(half) - int64(offset)) / perPPM
	lo := (-int64(half) - int64(offset)) / perPPM
	return min(max(drift, lo), hi)
}

// clampJumps narrows every clock jump of a sorted event list so that its
// clock stays within half of errMax of true time, to the end of the run; a
// jump with no room left is dropped.
func clampJumps(clocks []Clock, events []Event, bd Bounds, end time.Duration) []Event {
	half := int64(bd.ClockErrorMax / 2)
	out := events[:0]
	for _, e := range events {
		if e.Kind != ClockJump {
			out = append(out, e)
			continue
		}
		lo, hi := jumpRoom(clocks, out, e, half, int64(end), bd.ClockJumpMax)
		d := min(max(int64(e.Delta), lo), hi) / 1e6 * 1e6 // whole ms, toward zero: still inside
		if d == 0 {
			continue
		}
		e.Delta = time.Duration(d)
		out = append(out, e)
	}
	return out
}

// jumpRoom is how far jump e may step its clock, given the clocks and the
// jumps kept before it, for the clock to stay within half of true time at
// the jump and at the end of the run (it is linear in between), and within
// jumpMax when that is positive.
func jumpRoom(clocks []Clock, kept []Event, e Event, half, end int64, jumpMax time.Duration) (lo, hi int64) {
	var c Clock
	for _, x := range clocks {
		if x.Kind == e.Target && x.Index == e.Index {
			c = x
		}
	}
	var prior int64
	for _, x := range kept {
		if x.Kind == ClockJump && x.Target == e.Target && x.Index == e.Index {
			prior += int64(x.Delta)
		}
	}
	devAt := int64(c.Offset) + DriftAt(c.DriftPPM, int64(e.At)) + prior
	devEnd := int64(c.Offset) + DriftAt(c.DriftPPM, end) + prior
	lo, hi = max(-half-devAt, -half-devEnd), min(half-devAt, half-devEnd)
	if jumpMax > 0 {
		lo, hi = max(lo, -int64(jumpMax)), min(hi, int64(jumpMax))
	}
	return lo, hi
}

// drawPoints draws the fault points: pauses up to 2 min; with a validity
// edge to keep, pauses sized by the validity that leave the edge, the
// plan's extra latency and a little more; when breaking it, pauses that end
// past the validity.
func drawPoints(t *rapid.T, bd Bounds, br breakSet, extraLatency time.Duration) Points {
	pts := Points{PausePPM: PPM(rapid.Uint32Range(1, 200_000).Draw(t, "pause_ppm"))}
	switch {
	case br.has(BreakUseWithinValidity) || br.has(BreakTokenChecks):
		pts.UntilValidityLeft = -drawMillis(t, "past_validity", 1, 30_000)
		pts.PauseFor = drawMillis(t, "pause_for", 1, 120_000)
	case bd.ValidityEdge > 0:
		pts.UntilValidityLeft = bd.ValidityEdge + extraLatency + time.Millisecond + drawMillis(t, "validity_slack", 0, 30_000)
	default:
		pts.PauseFor = drawMillis(t, "pause_for", 1, 120_000)
	}
	return pts
}

// drawMillis draws a duration of whole milliseconds in [lo, hi] ms,
// shrinking toward lo.
func drawMillis(t *rapid.T, label string, lo, hi int64) time.Duration {
	return time.Millisecond * time.Duration(rapid.Int64Range(lo, hi).Draw(t, label+"_ms"))
}

// eventKinds lists the event features a allows and bd does not forbid,
// smallest fault first: rapid shrinks a sampled kind toward the front.
func eventKinds(a Allowed, bd Bounds, br breakSet) []feature {
	var out []feature
	for _, f := range []feature{featClog, featPause, featJump, featCrash, featAmnesia, featPartition, featTopology} {
		if a.permits(f) && !bd.forbids(f, br) {
			out = append(out, f)
		}
	}
	return out
}

// drawZones puts every host in a local time zone, whole hours from UTC
// (shrinking toward UTC), each with a daylight-saving change or not.
func drawZones(t *rapid.T, s Shape) []Zone {
	out := make([]Zone, s.Hosts)
	lastMs := int64((s.Duration - 1) / time.Millisecond)
	for h := range out {
		out[h] = Zone{Host: h, Offset: time.Duration(rapid.IntRange(-12, 12).Draw(t, "offset hours")) * time.Hour}
		at, by := drawMillis(t, "shift at", 0, lastMs), rapid.SampledFrom([]time.Duration{0, time.Hour, -time.Hour}).Draw(t, "shift")
		if by != 0 {
			out[h].ShiftAt, out[h].Shift = at, by
		}
	}
	return out
}
