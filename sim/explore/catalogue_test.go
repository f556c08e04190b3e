package explore

import (
	"slices"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"

	"github.com/locksim/locksim/model"
)

// The catalogue of reports/BUGS.md: each distinct bug of the original, and
// how a run that shows it is recognised. A run is the entry of the first
// rule it matches, in order; the rules read the history (who held, what
// moved, what restarted) and the seed's world and plan, never the seed.

// entry is one bug of BUGS.md.
type entry struct {
	name    string              // its repro file, reports/bugs/<name>.json
	variant string              // "original", or the literal reading
	beyond  string              // the assumption its sweep breaks, when it needs one
	kind    model.ViolationKind // the violation it is; minimising keeps it
	fix     string              // the variant that fixes it
	repro   string              // its repro file, reports/bugs/<repro>.json ("": name)
	match   func(o Outcome) bool
}

// target is the default sweep that finds e: every fault class, each seed
// drawing its world; beyond e's assumption when it needs one broken.
func (e entry) target() Target {
	tg := DefaultTarget(variant(e.variant), faults.ClassAll)
	if e.beyond != "" {
		tg.Beyond = []algorithm.Assumption{algorithm.Assumption(e.beyond)}
	}
	return tg
}

// sweepCommand is the command line of e's default sweep.
func (e entry) sweepCommand() string {
	s := "go run ./cmd/locksim sweep -variant " + e.variant + " -faults all -keep-going"
	if e.beyond != "" {
		s += " -beyond " + e.beyond
	}
	return s
}

// catalogue is in BUGS.md's order; first match wins.
var catalogue = []entry{
	{name: "host-identity", fix: "fix-identity", kind: model.MutualExclusion, variant: "original", match: sharedHost},
	{name: "empty-topology", fix: "fix-quorum", kind: model.MutualExclusion, variant: "original", match: emptyTopology},
	{name: "quorum-replication-1", fix: "fix-quorum", kind: model.MutualExclusion, variant: "original", match: func(o Outcome) bool {
		return safetyOf(o) != nil && o.History.Replicas == 1
	}},
	{name: "amnesia", fix: "fix-amnesia", kind: model.MutualExclusion, variant: "original", match: func(o Outcome) bool {
		return during(o, func(from, to int64) bool {
			return slices.ContainsFunc(o.History.Restarts, func(r model.Restart) bool { return r.Empty && r.Time >= from && r.Time <= to })
		})
	}},
	{name: "topology", fix: "corrected", kind: model.MutualExclusion, variant: "original", match: func(o Outcome) bool {
		return during(o, func(from, to int64) bool {
			return slices.ContainsFunc(o.History.Moves, func(m model.Move) bool { return m.Time >= from && m.Time <= to })
		})
	}},
	{name: "no-validity", fix: "fix-validity", kind: model.MutualExclusion, variant: "original", match: func(o Outcome) bool {
		return during(o, func(from, to int64) bool { return to-from >= int64(o.History.TTL) })
	}},
	{name: "local-time", fix: "fix-clock", kind: model.MutualExclusion, variant: "original", match: func(o Outcome) bool {
		return safetyOf(o) != nil && len(o.Plan.Zones) > 0
	}},
	// A move before the first grant whose news had not reached every
	// client: their views of the key's nodes differ (stale caches).
	{name: "stale-topology", fix: "corrected", kind: model.MutualExclusion, variant: "original", match: func(o Outcome) bool {
		f := twoHolders(o)
		return f != nil && slices.ContainsFunc(o.History.Moves, func(m model.Move) bool { return m.Time <= f.Time })
	}},
	{name: "data-under-lock-name", fix: "corrected", kind: model.DataLoss, variant: "original", match: func(o Outcome) bool { return lostData(o, "k_lock") }},
	{name: "over-strict-quorum", fix: "fix-quorum", kind: model.Liveness, variant: "original", match: func(o Outcome) bool {
		r := o.History.Replicas
		if !starved(o) || r < 4 {
			return false
		}
		return noAmbiguity(o) || (starves(o, "fix-partial") && !starves(o, "fix-quorum"))
	}},
	{name: "partial-locks", fix: "fix-partial", kind: model.Liveness, variant: "original", match: func(o Outcome) bool { return livenessOf(o) != nil }},
	{name: "literal-clear", fix: "original", kind: model.DataLoss, variant: "original-literal", match: func(o Outcome) bool { return lostData(o, "k") }},
	{name: "clock-skew", fix: "fix-clock", repro: "clock-skew", kind: model.MutualExclusion, variant: "original", beyond: "clock-error", match: func(o Outcome) bool {
		return slices.ContainsFunc(o.Findings, func(f Finding) bool {
			return !f.Kind.IsLiveness() && f.Breach != nil && f.Breach.Assumption == "clock-error"
		})
	}},
}

// entryOf is the catalogue entry run o of variant v shows, or "".
// The literal reading's own entries come first for it; it keeps every bug
// of the original too.
func entryOf(v string, o Outcome) string {
	for _, pass := range []string{v, "original"} {
		for _, e := range catalogue {
			if e.variant == pass && e.match(o) {
				return e.name
			}
		}
	}
	return ""
}

// firstBug is o's first bug that keep accepts, or nil.
func firstBug(o Outcome, keep func(Finding) bool) *Finding {
	for i, f := range o.Findings {
		if f.Bug() && keep(f) {
			return &o.Findings[i]
		}
	}
	return nil
}

// safetyOf is o's first safety bug: two holders, or the resource's or the
// application's data damaged.
func safetyOf(o Outcome) *Finding {
	return firstBug(o, func(f Finding) bool { return !f.Kind.IsLiveness() })
}

func livenessOf(o Outcome) *Finding {
	return firstBug(o, func(f Finding) bool { return f.Kind.IsLiveness() })
}

// twoHolders is o's first mutual-exclusion bug, if any.
func twoHolders(o Outcome) *Finding {
	return firstBug(o, func(f Finding) bool { return f.Kind == model.MutualExclusion })
}

// sharedHost: the two holders are threads of one host, or another thread
// of the first holder's host released (so cleared its items) while it held.
func sharedHost(o Outcome) bool {
	f := twoHolders(o)
	if f == nil || len(f.Clients) < 2 {
		return false
	}
	h := o.History.Clients
	a := f.Clients[0]
	if h[a].Host == h[f.Clients[1]].Host {
		return true
	}
	return during(o, func(from, to int64) bool {
		return slices.ContainsFunc(o.History.Events, func(e model.Event) bool {
			return (e.Kind == model.ReleaseCall || e.Kind == model.ReleaseReturn) && e.Client != a && h[e.Client].Host == h[a].Host && e.Time >= from && e.Time <= to
		})
	})
}

// emptyTopology: a holder was granted while the key had no nodes.
func emptyTopology(o Outcome) bool {
	if twoHolders(o) == nil {
		return false
	}
	return slices.ContainsFunc(o.History.Moves, func(m model.Move) bool { return len(m.Nodes) == 0 })
}

// during reports whether, for o's first two holders, what happened between
// the earlier one's grant and the second grant satisfies p.
func during(o Outcome, p func(from, to int64) bool) bool {
	f := twoHolders(o)
	if f == nil || len(f.Clients) < 2 {
		return false
	}
	first := f.Clients[0]
	var grant int64 = -1
	for _, e := range o.History.Events {
		if e.Time > f.Time {
			break
		}
		if e.Client == first && e.Kind == model.AcquireReturn && e.Granted {
			grant = e.Time
		}
	}
	return grant >= 0 && p(grant, f.Time)
}

// noAmbiguity: no write can have been applied without the writer hearing
// so (no loss, no reply lost, every reply in time), so no failed acquire
// left items behind unknowingly: a starved waiter met a node that was down.
func noAmbiguity(o Outcome) bool {
	n, c := o.Plan.Network, o.Config
	return n.LossPPM == 0 && n.ReplyLossPPM == 0 && c.SlowExtra == 0 &&
		c.LatencyMax+c.LatencyTail+n.ExtraLatencyMax < c.RPCTimeout &&
		!slices.ContainsFunc(o.Plan.Events, func(e faults.Event) bool { return e.Kind == faults.Clog })
}

// starves reports whether variant v, in o's world with o's seed and plan,
// starves waiters too: a difference test, for a run where partial locks
// and the quorum could each be why.
func starves(o Outcome, v string) bool {
	r, err := RunPlan(Target{Variant: variant(v), Config: o.Config}, o.Seed, o.Plan, DefaultOptions())
	return err == nil && starved(r)
}

// starved reports whether o's waiters starved (not only items left behind).
func starved(o Outcome) bool {
	return firstBug(o, func(f Finding) bool { return f.Kind == model.Liveness }) != nil
}

// lostData: the application's data under key was destroyed.
func lostData(o Outcome, key string) bool {
	for _, d := range o.History.DataLoss {
		if d.Key == key {
			return true
		}
	}
	return false
}
