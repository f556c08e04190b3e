// Package repro reads, writes and replays repro files (Repro): what a
// failing run needs to run again, with the verdict it had and the schedule
// or scheduler it ran under; and writes a run's pages, its timeline and
// porcupine's view (pages.go).
//
// It imports seedrun, schedule, sim/envelope and reports.
package repro

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/schedule"
	"github.com/locksim/locksim/sim/seedrun"
)

// ReproFormat is the repro file format's version; bump it on any change a
// reader must know about.
const ReproFormat = 1

// Repro is everything needed to replay a failure: the run is a pure
// function of (variant, config, seed, plan). The verdict is recorded so a
// replay can say whether it still holds. Durations are nanoseconds.
type Repro struct {
	Format  int            `json:"format"`
	Version string         `json:"locksim_version"`
	Variant string         `json:"variant"`
	Classes []faults.Class `json:"classes,omitempty"`
	// Beyond lists the assumptions the seed's plan was drawn to break; none:
	// it was drawn inside the envelope.
	Beyond []algorithm.Assumption `json:"beyond,omitempty"`
	// World lists the fields of the config the seed drew (Config holds what
	// it drew); none: the config was given whole.
	World     []envelope.WorldField `json:"world,omitempty"`
	Seed      uint64                `json:"seed"`
	Config    sim.Config            `json:"config"`
	Plan      faults.Plan           `json:"plan"`
	Minimized bool                  `json:"minimized,omitempty"`
	TraceHash string                `json:"trace_hash"`
	Verdict   model.Verdict         `json:"verdict"`
	// Check holds the check options the verdict was found with, when they
	// are not the defaults (a liveness bound of its own).
	Check *model.CheckOptions `json:"check,omitempty"`
	// Schedule, when set, is the schedule of a systematic exploration
	// (Exhaust) that decides every choice point of the run: the seed then
	// seeds only the algorithm's own randomness. Plan holds the faults the
	// exploration started from, not those the schedule injects.
	Schedule *schedule.Schedule `json:"schedule,omitempty"`
	// PCT, when set, is the PCT scheduler the seed ran under.
	PCT *schedule.PCT `json:"pct,omitempty"`
	// Runner names the way the seed ran when not the kernel's (Target.Runner:
	// "realredis" for a lock over real Redis clients): such a repro
	// replays only from the test that ran it.
	Runner string `json:"runner,omitempty"`
	// Changes are the world changes the target applied to every seed
	// (Target.Changes: a sweep of one bug alone); Config and Plan are the
	// world and plan as changed, and replaying applies them again, which
	// changes nothing more.
	Changes []algorithm.WorldChange `json:"changes,omitempty"`

	variant algorithm.Variant // what Variant names: set by NewRepro and DecodeRepro
}

// NewRepro records an outcome of target.
func NewRepro(t seedrun.Target, o seedrun.Outcome) Repro {
	r := Repro{Format: ReproFormat, Version: seedrun.Version, Variant: t.Variant.Name, Classes: t.Classes,
		Beyond: t.Beyond, World: t.World, Seed: o.Seed, Config: t.At(o.Seed).Config, Plan: o.Plan, TraceHash: fmt.Sprintf("%016x", o.Hash), Verdict: o.Verdict,
		variant: t.Variant}
	r.Verdict.Later = nil // a run's every violation is for its reader: the file keeps what replay compares
	c := o.CheckOptions()
	c.Every = false
	if c != model.DefaultCheckOptions() && c != (model.CheckOptions{}) {
		r.Check = &c
	}
	r.Schedule, r.PCT = o.Schedule, t.PCT
	if len(t.Changes) > 0 {
		r.Changes, r.Config = t.Changes, o.Config // the world as changed
	}
	if n, ok := t.Runner.(interface{ Name() string }); ok {
		r.Runner = n.Name()
	}
	return r
}

// CheckOptions are the check options the repro's verdict was found with.
func (r Repro) CheckOptions() model.CheckOptions {
	if r.Check != nil {
		return *r.Check
	}
	return model.DefaultCheckOptions()
}

// Target is the repro's target, in the world its seed ran in.
func (r Repro) Target() seedrun.Target {
	return seedrun.Target{Variant: r.variant, Config: r.Config, Classes: r.Classes, Beyond: r.Beyond, PCT: r.PCT, Changes: r.Changes}
}

// SeedTarget is the target the repro's seed was drawn from, world and all:
// what ReplayCommand needs to redraw it.
func (r Repro) SeedTarget() seedrun.Target {
	t := r.Target()
	t.World = r.World
	return t
}

// Encode writes the repro as indented JSON.
func (r Repro) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeRepro reads a repro strictly: unknown fields, trailing data, other
// formats, unknown variants and invalid configs or plans are errors that say
// what is wrong.
func DecodeRepro(data []byte, lookup Lookup) (Repro, error) {
	return decodeRepro(data, lookup)
}

// Lookup finds the variant a repro file names: variants.Lookup for the
// registered ones (what the CLI passes); a test of a lock of its own
// passes its own (or uses DecodeReproFor). The engine knows no names.
type Lookup func(name string) (algorithm.Variant, error)

// DecodeReproFor reads a repro of variant v, a lock that need not be
// registered (one defined in a user's own module): the file must name v.
func DecodeReproFor(data []byte, v algorithm.Variant) (Repro, error) {
	return decodeRepro(data, func(name string) (algorithm.Variant, error) {
		if name != v.Name {
			return algorithm.Variant{}, fmt.Errorf("the repro is of variant %q, not %q", name, v.Name)
		}
		return v, nil
	})
}

func decodeRepro(data []byte, lookup func(string) (algorithm.Variant, error)) (Repro, error) {
	if err := faults.CheckJSONObject(data, seedrun.MaxReproBytes); err != nil {
		return Repro{}, fmt.Errorf("repro: not a valid repro file: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Repro
	if err := dec.Decode(&r); err != nil {
		return Repro{}, fmt.Errorf("repro: not a valid repro file: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Repro{}, errors.New("repro: trailing data after the JSON object")
	}
	if r.Format != ReproFormat {
		return Repro{}, fmt.Errorf("repro: format %d is not supported (this locksim reads format %d)", r.Format, ReproFormat)
	}
	v, err := lookup(r.Variant)
	if err != nil && r.Runner != "" {
		return Repro{}, fmt.Errorf("repro: %s ran through %s, from a go test: replay it with that test's -locksim.replay line", r.Variant, r.Runner)
	}
	if err != nil {
		return Repro{}, fmt.Errorf("repro: %v", err)
	}
	r.variant = v
	if err := r.validate(); err != nil {
		return Repro{}, fmt.Errorf("repro: %v", err)
	}
	return r, nil
}

// validate reports the first part of a decoded repro that is not valid or
// is past the limits: its classes, config, world changes, check options,
// world, schedule, PCT, assumptions broken and plan.
func (r Repro) validate() error {
	for _, c := range r.Classes {
		if _, err := faults.ParseClasses(string(c)); err != nil {
			return err
		}
	}
	if err := r.Config.Validate(); err != nil {
		return err
	}
	for _, c := range r.Changes {
		if !slices.Contains(envelope.EveryWorldChange, c) {
			return fmt.Errorf("unknown world change %q", c)
		}
	}
	if r.Check != nil {
		if err := cmp.Or(r.Check.Validate(), seedrun.CheckLivenessBound(r.Check.LivenessBoundTTLs, r.Check.LivenessBoundNS)); err != nil {
			return err
		}
	}
	for _, f := range r.World {
		if _, err := envelope.ParseWorld(string(f)); err != nil {
			return fmt.Errorf("world: %v", err)
		}
	}
	if err := cmp.Or(r.Schedule.Validate(), checkScheduleLimits(r.Schedule)); err != nil {
		return err
	}
	if r.PCT != nil {
		if err := r.PCT.Validate(); err != nil {
			return err
		}
	}
	if err := (seedrun.Target{Variant: r.variant, Config: r.Config, Classes: r.Classes, Beyond: r.Beyond}).Edges().ValidateBeyond(); err != nil {
		return fmt.Errorf("beyond: %v", err)
	}
	cfg := r.Config.Under(r.Plan)
	if err := r.Plan.Validate(seedrun.Target{Config: cfg}.Shape()); err != nil {
		return err
	}
	// A plan its classes could not have drawn was edited by hand: replaying
	// it by seed would run something else, so say so instead of guessing.
	if len(r.Classes) > 0 {
		return faults.Allow(r.Classes...).Check(r.Plan)
	}
	return nil
}

// ReadRepro reads and decodes a repro file, its variant found by lookup;
// it reads at most MaxReproBytes of it.
func ReadRepro(path string, lookup Lookup) (Repro, error) {
	data, err := seedrun.ReadFile(path, "repro file", seedrun.MaxReproBytes)
	if err != nil {
		return Repro{}, fmt.Errorf("repro: %v", err)
	}
	r, err := DecodeRepro(data, lookup)
	if err != nil {
		return Repro{}, fmt.Errorf("%s: %v", path, err)
	}
	return r, nil
}

// WriteRepro writes r into dir as ReproPath names it and returns the path.
func WriteRepro(dir string, r Repro) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := ReproPath(dir, r)
	if old, err := os.ReadFile(path); err == nil && !sameScenario(old, r) {
		// Another scenario's repro of this variant and seed (other classes,
		// world or config): keep it, and name this one by its scenario.
		path = strings.TrimSuffix(path, ".json") + "-" + r.scenarioID() + ".json"
	}
	return path, WriteReproAt(path, r)
}

// scenarioID is eight hex digits that tell r's scenario from another's of
// the same variant and seed.
func (r Repro) scenarioID() string {
	h := fnv.New32a()
	h.Write(r.scenarioKey())
	return fmt.Sprintf("%08x", h.Sum32())
}

// scenarioKey is what makes a run what it is: variant, seed, classes,
// assumptions broken, world, config, plan and check.
func (r Repro) scenarioKey() []byte {
	b, _ := json.Marshal(struct {
		V string
		S uint64
		C []faults.Class
		B []algorithm.Assumption
		W []envelope.WorldField
		K sim.Config
		P faults.Plan
		M bool
		X *model.CheckOptions
		D *schedule.Schedule
		T *schedule.PCT
	}{r.Variant, r.Seed, r.Classes, r.Beyond, r.World, r.Config, r.Plan, r.Minimized, r.Check, r.Schedule, r.PCT})
	return b
}

// sameScenario reports whether data is a repro of r's scenario.
func sameScenario(data []byte, r Repro) bool {
	old, err := DecodeReproFor(data, r.variant)
	return err == nil && string(old.scenarioKey()) == string(r.scenarioKey())
}

// ReproPath is where WriteRepro puts r in dir: VARIANT-seed-N[-min].json,
// or VARIANT-schedule-kK.json for an explored schedule with K faults.
func ReproPath(dir string, r Repro) string {
	name := r.Variant + "-seed-" + strconv.FormatUint(r.Seed, 10)
	if r.Schedule != nil {
		name = r.Variant + "-schedule-k" + strconv.Itoa(r.Schedule.Faults())
	}
	if r.Minimized {
		name += "-min"
	}
	return filepath.Join(dir, name+".json")
}

// WriteReproAt writes r to path, atomically.
func WriteReproAt(path string, r Repro) error {
	data, err := r.Encode()
	if err != nil {
		return err
	}
	return seedrun.WriteFileAtomic(path, data)
}

// Replay re-runs a repro and reports the outcome; the caller compares
// verdicts (found with opt.Check: r.CheckOptions() for the recorded ones).
func Replay(r Repro, opt seedrun.Options) (seedrun.Outcome, error) {
	if r.Schedule != nil {
		opt.Schedule = r.Schedule
	}
	return seedrun.RunPlan(r.Target(), r.Seed, r.Plan, opt)
}

// checkScheduleLimits checks the spans of an explored schedule's menu and
// the number of its deviations.
func checkScheduleLimits(s *schedule.Schedule) error {
	if s == nil {
		return nil
	}
	if len(s.Deviations) > faults.MaxEvents {
		return fmt.Errorf("schedule: %d deviations are more than %d", len(s.Deviations), faults.MaxEvents)
	}
	m := s.Menu
	spans := append([]time.Duration{m.CrashFor, m.WipeFor, m.Edge, m.PastBy, m.EmptyFor}, m.ClockSteps...)
	if slices.ContainsFunc(spans, func(d time.Duration) bool { return d > faults.MaxSpan || d < -faults.MaxSpan }) {
		return fmt.Errorf("schedule: a duration of the menu is longer than %v", faults.MaxSpan)
	}
	return nil
}
