package explore

import (
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
)

// The world a seed draws moved to sim/envelope (world.go); these names
// are kept so that callers of explore keep working. New code uses
// envelope's.

// WorldField is envelope.WorldField.
type WorldField = envelope.WorldField

// The world fields, as envelope's.
const (
	WorldNodes       = envelope.WorldNodes
	WorldReplication = envelope.WorldReplication
	WorldHosts       = envelope.WorldHosts
	WorldThreads     = envelope.WorldThreads
	WorldTTL         = envelope.WorldTTL
	WorldHold        = envelope.WorldHold
	WorldThink       = envelope.WorldThink
	WorldLatency     = envelope.WorldLatency
	WorldVersions    = envelope.WorldVersions
	WorldData        = envelope.WorldData
)

// EveryWorldField is envelope.EveryWorldField.
var EveryWorldField = envelope.EveryWorldField

// WorldFieldsOfJSON is envelope.WorldFieldsOfJSON.
func WorldFieldsOfJSON(names []string) []WorldField { return envelope.WorldFieldsOfJSON(names) }

// FieldOfFlag is envelope.FieldOfFlag.
func FieldOfFlag(flag string) (WorldField, bool) { return envelope.FieldOfFlag(flag) }

// ParseWorld is envelope.ParseWorld.
func ParseWorld(s string) ([]WorldField, error) { return envelope.ParseWorld(s) }

// DefaultWorld is envelope.DefaultWorld.
func DefaultWorld(classes []faults.Class) []WorldField { return envelope.DefaultWorld(classes) }

// DescribeWorld is envelope.DescribeWorld.
func DescribeWorld(c sim.Config, draw []WorldField) string { return envelope.DescribeWorld(c, draw) }

// DescribeSlowLink is envelope.DescribeSlowLink.
func DescribeSlowLink(c sim.Config) string { return envelope.DescribeSlowLink(c) }

// WorldGen is envelope.WorldGen.
func WorldGen(base sim.Config, draw []WorldField) *rapid.Generator[sim.Config] {
	return envelope.WorldGen(base, draw)
}

// Span is envelope.Span.
func Span(d time.Duration) string { return envelope.Span(d) }

// Judging which assumptions a run broke moved to sim/envelope (breach.go);
// these names are kept so that callers of explore keep working.

// Breach is envelope.Breach.
type Breach = envelope.Breach

// Breaches is envelope.Breaches.
func Breaches(env algorithm.Envelope, cfg sim.Config, plan faults.Plan, h model.History) []Breach {
	return envelope.Breaches(env, cfg, plan, h)
}

// World changes moved to sim/envelope (changes.go); these names are kept
// so that callers of explore keep working.

// EveryWorldChange is envelope.EveryWorldChange.
var EveryWorldChange = envelope.EveryWorldChange

// ChangeWorld is envelope.ChangeWorld.
func ChangeWorld(c algorithm.WorldChange, cfg sim.Config, plan faults.Plan, v algorithm.Variant) (sim.Config, faults.Plan, algorithm.Variant, bool, error) {
	return envelope.ChangeWorld(c, cfg, plan, v)
}
