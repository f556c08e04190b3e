// Package enginetest holds what the tests of the engine's packages (sweep,
// minimize, repro, seedrun) share, so that each need not keep a copy. Only
// tests import it.
package enginetest

import (
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// ShortTarget is the registered variant called name in the default world
// cut to two minutes of virtual time, under classes.
func ShortTarget(name string, classes ...faults.Class) seedrun.Target {
	c := sim.DefaultConfig()
	c.Duration = 2 * time.Minute
	return seedrun.Target{Variant: variants.MustLookup(name), Config: c, Classes: classes}
}
