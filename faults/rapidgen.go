package faults

import (
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
	s.mustValidate()
	a := Allow(classes...)
	if a == 0 {
		return rapid.Just(Plan{}) // Custom must draw something; there is nothing to draw
	}
	return rapid.Custom(func(t *rapid.T) Plan {
		var p Plan
		p.Network = drawNetwork(t, a)
		if a.permits(featOffset) {
			p.Clocks = drawClocks(t, s)
		}
		if a.permits(featThreads) && rapid.Bool().Draw(t, "threads") {
			p.ThreadsPerHost = rapid.IntRange(2, 3).Draw(t, "threads_per_host")
		}
		if a.permits(featPoints) && rapid.Bool().Draw(t, "points") {
			p.Points = Points{
				PausePPM: PPM(rapid.Uint32Range(1, 200_000).Draw(t, "pause_ppm")),
				PauseFor: drawMillis(t, "pause_for", 1, 120_000),
			}
		}
		if kinds := eventKinds(a); len(kinds) > 0 {
			ev := eventGen(kinds, s, s.ClientsFor(p))
			p.Events = rapid.SliceOfN(ev, 0, maxSwarmEvents).Draw(t, "events")
			slices.SortStableFunc(p.Events, func(a, b Event) int { return cmpDuration(a.At, b.At) })
		}
		p.normalize()
		return p
	})
}

func drawNetwork(t *rapid.T, a Allowed) Network {
	var n Network
	ppm := func(f feature, label string, hi uint32) PPM {
		if !a.permits(f) {
			return 0
		}
		return PPM(rapid.Uint32Range(0, hi).Draw(t, label))
	}
	n.LossPPM = ppm(featLoss, "loss_ppm", 200_000)
	n.DuplicatePPM = ppm(featDuplicate, "duplicate_ppm", 100_000)
	n.ReplyLossPPM = ppm(featReplyLoss, "reply_loss_ppm", 300_000)
	if a.permits(featLatency) {
		n.ExtraLatencyMax = drawMillis(t, "extra_latency_max", 0, 1_000)
	}
	return n
}

// drawClocks draws clocks for distinct processes; offset and drift shrink
// toward a perfect clock, and the list toward none.
func drawClocks(t *rapid.T, s Shape) []Clock {
	clock := rapid.Custom(func(t *rapid.T) Clock {
		c := Clock{Kind: rapid.SampledFrom([]ProcessKind{HostProcess, NodeProcess}).Draw(t, "kind")}
		c.Index = rapid.IntRange(0, s.processes(c.Kind)-1).Draw(t, "index")
		c.Offset = time.Millisecond * time.Duration(rapid.Int64Range(-180_000, 180_000).Draw(t, "offset_ms"))
		c.DriftPPM = rapid.Int64Range(-200_000, 200_000).Draw(t, "drift_ppm")
		return c
	})
	key := func(c Clock) Clock { return Clock{Kind: c.Kind, Index: c.Index} }
	return rapid.SliceOfNDistinct(clock, 0, s.Nodes+s.Hosts, key).Draw(t, "clocks")
}

// drawMillis draws a duration of whole milliseconds in [lo, hi] ms,
// shrinking toward lo.
func drawMillis(t *rapid.T, label string, lo, hi int64) time.Duration {
	return time.Millisecond * time.Duration(rapid.Int64Range(lo, hi).Draw(t, label+"_ms"))
}

// eventKinds lists the event features a allows, smallest fault first:
// rapid shrinks a sampled kind toward the front.
func eventKinds(a Allowed) []feature {
	var out []feature
	for _, f := range []feature{featClog, featPause, featJump, featCrash, featAmnesia, featPartition, featTopology} {
		if a.permits(f) {
			out = append(out, f)
		}
	}
	return out
}
