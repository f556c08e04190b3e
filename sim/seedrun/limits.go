package seedrun

import (
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/envelope"
)

// Input limits: the most a file, a count or a span given to locksim may be,
// in one place. Every subcommand checks its input against them before it
// runs anything, and so do the decoders (DecodeRepro, DecodeShards,
// faults.Decode); a bad input is one sentence and exit 2, never a run that
// ends as a hang or out of memory and is blamed on the lock.
//
// The world's and the plan's, which the simulator checks itself
// (sim.Config.Validate, faults.Plan.Validate), are in package faults:
//
//	faults.MaxDuration     1 h           virtual time of one run
//	faults.MaxClients      64            client threads in all (hosts × threads per host)
//	faults.MaxClientTime   16 h          clients × duration
//	faults.MaxSpan         1000 h        any other duration of a world or a plan
//	faults.MaxEvents       100,000       timed events in one plan
//	faults.MaxPlanBytes    32 MiB        a plan file
//	faults.MaxCap          100,000,000   a world's caps on a run's work
//	sim.MaxNodes, MaxHosts 64            a world's nodes, hosts
//
// The files' and the command line's are here; the checks of a seed range
// (sweep.CheckSeeds), a schedule (repro's) and a comparison's worlds
// (compare.CompareOptions.CheckWorlds) live beside what they check.
const (
	// MaxReproBytes is the largest repro file read: one holding a plan of
	// faults.MaxEvents events, and its verdict, is under 32 MiB.
	MaxReproBytes = 48 << 20
	// MaxConfigBytes is the largest -config file read: a config is a few
	// hundred bytes.
	MaxConfigBytes = 1 << 20
	// MaxShardBytes is the largest sweep -json output merge reads from one
	// file: some 200,000 failures, more than a merge can print usefully.
	MaxShardBytes = 256 << 20
	// MaxParallel is the most workers a command starts (-parallel): each
	// may be a process of its own, and no machine has as many cores.
	MaxParallel = 1024
	// MaxLivenessBoundTTLs is the largest liveness bound in TTLs: at
	// faults.MaxSpan a TTL, more would overflow.
	MaxLivenessBoundTTLs = 1000
)

// checkLivenessBound checks a liveness bound against its limits.
func checkLivenessBound(c model.CheckOptions) error {
	switch {
	case c.LivenessBoundTTLs > MaxLivenessBoundTTLs:
		return fmt.Errorf("check options: liveness_bound_ttls (%d) is more than %d", c.LivenessBoundTTLs, MaxLivenessBoundTTLs)
	case time.Duration(c.LivenessBoundNS) > faults.MaxSpan:
		return fmt.Errorf("check options: liveness_bound_ns (%d) is longer than %v", c.LivenessBoundNS, faults.MaxSpan)
	}
	return nil
}

// CheckLivenessBound checks a liveness bound as -liveness-bound gives it:
// ttls TTLs, or ns nanoseconds.
func CheckLivenessBound(ttls, ns int64) error {
	return checkLivenessBound(model.CheckOptions{LivenessBoundTTLs: ttls, LivenessBoundNS: ns})
}

// CheckWorlds reports whether some seed of t may draw a world past the
// limits (faults.MaxClients, faults.MaxClientTime): the one with the most
// clients t's seeds can draw (its hosts and threads at their largest, a
// plan of class threads on top), in t's duration. A sweep checks it before
// its first seed, so that no seed fails on its world halfway.
func (t Target) CheckWorlds() error {
	if err := t.Config.Validate(); err != nil {
		return err
	}
	c := t.Config
	if slices.Contains(t.World, envelope.WorldHosts) {
		c.Hosts = max(c.Hosts, envelope.MaxWorldHosts)
	}
	if slices.Contains(t.World, envelope.WorldThreads) {
		c.ThreadsPerHost = max(c.ThreadsPerHost, envelope.MaxWorldThreads)
	}
	switch {
	case t.Plan != nil:
		c = c.Under(*t.Plan)
	case faults.Allow(t.Classes...).Has(faults.ClassThreads):
		c.ThreadsPerHost = max(c.ThreadsPerHost, faults.MaxDrawnThreadsPerHost)
	}
	if c == t.Config {
		return nil // t.Validate checked it
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("a seed may draw a world of %d hosts with %d threads each, past the limits (%v): pin -hosts or -threads lower, or give a shorter -duration", c.Hosts, c.ThreadsPerHost, err)
	}
	return nil
}
