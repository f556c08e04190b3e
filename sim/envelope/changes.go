package envelope

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// A world change is a counterfactual: it removes one thing from a seed's
// world or plan and keeps everything else, so that a replay tells whether
// that thing was needed. Attribution (package cause) replays failing seeds
// with them; a target's Changes applies them to every seed it runs.

// EveryWorldChange lists the changes the harness makes, the faults first.
var EveryWorldChange = []algorithm.WorldChange{
	algorithm.NoWipes, algorithm.NoCrashes, algorithm.NoPartitions, algorithm.NoClogs, algorithm.NoPauses,
	algorithm.NoClockErrors, algorithm.NoTimeZones, algorithm.NoLoss, algorithm.NoDuplicates, algorithm.NoExtraLatency,
	algorithm.PinnedTopology, algorithm.InstantTopology, algorithm.OneThreadPerHost, algorithm.NoApplicationData,
	algorithm.ReservedNames, algorithm.UniqueVersions, algorithm.QuarantinedNodes,
	algorithm.NoLateHolders, algorithm.NoShortDeadlines, algorithm.NoStrayRefresh,
}

// ChangeWorld applies change c to a seed's world, plan and variant. It
// reports false when c changes nothing there (a replay would be the run
// itself).
func ChangeWorld(c algorithm.WorldChange, cfg sim.Config, plan faults.Plan, v algorithm.Variant) (sim.Config, faults.Plan, algorithm.Variant, bool, error) {
	was := cfg
	p := plan
	p.Events = slices.Clone(plan.Events)
	p.Clocks, p.Zones = slices.Clone(plan.Clocks), slices.Clone(plan.Zones)
	switch c {
	case algorithm.OneThreadPerHost:
		threads := cfg.Under(plan).ThreadsPerHost
		if threads <= 1 {
			return cfg, plan, v, false, nil
		}
		cfg.ThreadsPerHost, p.ThreadsPerHost = 1, 0
		oneThreadPerHost(&p, threads)
	case algorithm.QuarantinedNodes:
		if !v.Envelope.Safety.RestartQuarantine || p.Deployment.NoQuarantine {
			v.Envelope.Safety.RestartQuarantine, p.Deployment.NoQuarantine = true, false
			return cfg, p, v, true, nil
		}
		return cfg, plan, v, false, nil
	default:
		if !changePlanOrConfig(c, &cfg, &p) {
			return cfg, plan, v, false, fmt.Errorf("unknown world change %q", c)
		}
	}
	changed := !reflect.DeepEqual(p, plan) || !reflect.DeepEqual(cfg, was)
	return cfg, p, v, changed, nil
}

// changePlanOrConfig applies to cfg and p a change that touches nothing
// else and needs nothing of the variant, the fault plan's copy already
// made: the removal of a fault, or a plain setting. It reports false, and
// changes nothing, for a change it does not know.
func changePlanOrConfig(c algorithm.WorldChange, cfg *sim.Config, p *faults.Plan) bool {
	switch c {
	case algorithm.NoWipes:
		for i := range p.Events {
			p.Events[i].Wipe = false
		}
	case algorithm.NoCrashes:
		withoutEvents(p, faults.Crash)
	case algorithm.NoPartitions:
		withoutEvents(p, faults.Partition)
	case algorithm.NoClogs:
		withoutEvents(p, faults.Clog)
	case algorithm.NoPauses:
		withoutEvents(p, faults.Pause)
		p.Points = faults.Points{}
	case algorithm.NoClockErrors:
		withoutEvents(p, faults.ClockJump)
		p.Clocks = nil
	case algorithm.NoTimeZones:
		p.Zones = nil
	case algorithm.NoLoss:
		p.Network.LossPPM, p.Network.ReplyLossPPM = 0, 0
	case algorithm.NoDuplicates:
		p.Network.DuplicatePPM = 0
	case algorithm.NoExtraLatency:
		p.Network.ExtraLatencyMax = 0
		cfg.SlowExtra = 0
	case algorithm.PinnedTopology:
		withoutEvents(p, faults.Topology)
	case algorithm.InstantTopology:
		for i := range p.Events {
			p.Events[i].Spread = 0
		}
	case algorithm.NoApplicationData:
		cfg.AppData = ""
	case algorithm.ReservedNames:
		if cfg.AppData == sim.AppDataLockName {
			cfg.AppData = sim.AppDataKey
		}
	case algorithm.UniqueVersions:
		cfg.RestartingVersions = false
	case algorithm.NoLateHolders:
		p.Use.LatePPM, p.Use.LateBy = 0, 0
	case algorithm.NoShortDeadlines:
		p.Use.ShortDeadlinePPM, p.Use.Deadline = 0, 0
	case algorithm.NoStrayRefresh:
		p.Use.RefreshPPM = 0
	default:
		return false
	}
	return true
}

// oneThreadPerHost drops the pauses of every thread of a host but its
// first from p, whose clients were numbered host by host (client
// h*threads+t), and renumbers the pauses kept to the host's one client.
func oneThreadPerHost(p *faults.Plan, threads int) {
	keepEvents(p, func(e faults.Event) bool { return e.Kind != faults.Pause || e.Client%threads == 0 })
	for i := range p.Events {
		if p.Events[i].Kind == faults.Pause {
			p.Events[i].Client /= threads
		}
	}
}

// keepEvents deletes from p's events, in place, those keep is false for.
func keepEvents(p *faults.Plan, keep func(faults.Event) bool) {
	p.Events = slices.DeleteFunc(p.Events, func(e faults.Event) bool { return !keep(e) })
}

// withoutEvents deletes from p's events those of kind k.
func withoutEvents(p *faults.Plan, k faults.Kind) {
	keepEvents(p, func(e faults.Event) bool { return e.Kind != k })
}
