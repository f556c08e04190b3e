package explore

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
}

// ChangeWorld applies change c to a seed's world, plan and variant. It
// reports false when c changes nothing there (a replay would be the run
// itself).
func ChangeWorld(c algorithm.WorldChange, cfg sim.Config, plan faults.Plan, v algorithm.Variant) (sim.Config, faults.Plan, algorithm.Variant, bool, error) {
	was := cfg
	p := plan
	p.Events = slices.Clone(plan.Events)
	p.Clocks, p.Zones = slices.Clone(plan.Clocks), slices.Clone(plan.Zones)
	drop := func(keep func(faults.Event) bool) {
		p.Events = slices.DeleteFunc(p.Events, func(e faults.Event) bool { return !keep(e) })
	}
	without := func(k faults.Kind) { drop(func(e faults.Event) bool { return e.Kind != k }) }
	switch c {
	case algorithm.NoWipes:
		for i := range p.Events {
			p.Events[i].Wipe = false
		}
	case algorithm.NoCrashes:
		without(faults.Crash)
	case algorithm.NoPartitions:
		without(faults.Partition)
	case algorithm.NoClogs:
		without(faults.Clog)
	case algorithm.NoPauses:
		without(faults.Pause)
		p.Points = faults.Points{}
	case algorithm.NoClockErrors:
		without(faults.ClockJump)
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
		without(faults.Topology)
	case algorithm.InstantTopology:
		for i := range p.Events {
			p.Events[i].Spread = 0
		}
	case algorithm.OneThreadPerHost:
		if cfg.Under(plan).ThreadsPerHost <= 1 {
			return cfg, plan, v, false, nil
		}
		// Clients are numbered host by host: client h*threads+t. The
		// first thread of each host keeps its pauses, renumbered.
		threads := cfg.Under(plan).ThreadsPerHost
		cfg.ThreadsPerHost, p.ThreadsPerHost = 1, 0
		drop(func(e faults.Event) bool { return e.Kind != faults.Pause || e.Client%threads == 0 })
		for i := range p.Events {
			if p.Events[i].Kind == faults.Pause {
				p.Events[i].Client /= threads
			}
		}
	case algorithm.NoApplicationData:
		cfg.AppData = ""
	case algorithm.ReservedNames:
		if cfg.AppData == sim.AppDataLockName {
			cfg.AppData = sim.AppDataKey
		}
	case algorithm.UniqueVersions:
		cfg.RestartingVersions = false
	case algorithm.QuarantinedNodes:
		if !v.Envelope.Safety.RestartQuarantine || p.Deployment.NoQuarantine {
			v.Envelope.Safety.RestartQuarantine, p.Deployment.NoQuarantine = true, false
			return cfg, p, v, true, nil
		}
		return cfg, plan, v, false, nil
	default:
		return cfg, plan, v, false, fmt.Errorf("unknown world change %q", c)
	}
	changed := !reflect.DeepEqual(p, plan) || !reflect.DeepEqual(cfg, was)
	return cfg, p, v, changed, nil
}
