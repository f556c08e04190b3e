package reports

import (
	"encoding/json"
	"io"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// Matrix compares lock variants across fault classes: one row per variant,
// one cell per class, each cell the outcome of the same Seeds seeds drawn
// inside the variant's envelope (a bug is a promised property broken there).
// Apart from it, the cost table: per variant and assumption, CostSeeds seeds
// drawn to break that assumption, and what broke after. The compare command
// fills it; Markdown, JSON and HTML render it.
type Matrix struct {
	Seeds   int            `json:"seeds"`   // seeds run per cell
	Classes []faults.Class `json:"classes"` // the columns, in order
	// Assumptions are the cost table's columns: every assumption some
	// row's variant makes, by name; CostSeeds seeds per cost (0: no table).
	Assumptions []string `json:"assumptions,omitempty"`
	CostSeeds   int      `json:"cost_seeds,omitempty"`
	Rows        []Row    `json:"rows"`
}

// Row is one variant's line of the matrix.
type Row struct {
	Variant  string         `json:"variant"`  // registry name, e.g. "original"
	Summary  string         `json:"summary"`  // what the variant changes, one line
	Envelope string         `json:"envelope"` // what it promises and assumes, one line
	Cells    []Cell         `json:"cells"`    // one per Matrix.Classes, same order
	Costs    []Cost         `json:"costs,omitempty"`
	Metrics  VariantMetrics `json:"metrics"`
	// Bounded is the variant's systematic exploration of a small world
	// (explore.Exhaust), when the comparison ran one.
	Bounded *Bounded `json:"bounded,omitempty"`
}

// Bounded is what every schedule of a small world with at most MaxFaults
// faults inside the variant's envelope showed: a counterexample with the
// fewest faults there are, or none.
type Bounded struct {
	World     string         `json:"world"` // "3 nodes, replication 3, 2 clients, 1 grant each"
	MaxFaults int            `json:"max_faults"`
	Levels    []BoundedLevel `json:"levels"`
	// Faults and Counterexample, when a schedule failed: the fewest faults
	// of any failing schedule, and the first such schedule's faults and
	// first violation in words.
	Faults         int    `json:"faults,omitempty"`
	Counterexample string `json:"counterexample,omitempty"`
	// Complete is false when the schedule budget ran out first.
	Complete bool `json:"complete"`
	// Command is the locksim explore command that finds the counterexample
	// (or the bounded result) again.
	Command string `json:"command"`
}

// BoundedLevel is the schedules with exactly Faults faults, and how many
// of them failed.
type BoundedLevel struct {
	Faults    int `json:"faults"`
	Schedules int `json:"schedules"`
	Failing   int `json:"failing"`
}

// VariantMetrics are a variant's performance figures, averaged by the
// compare command over its runs. Units are in the names.
type VariantMetrics struct {
	GrantsPerMinute  float64 `json:"grants_per_minute"`  // of true time
	AcquireP50ms     float64 `json:"acquire_p50_ms"`     // granted acquires
	AcquireP99ms     float64 `json:"acquire_p99_ms"`     // granted acquires
	Availability     float64 `json:"availability"`       // fraction of time some client held the lock, 0..1
	MessagesPerGrant float64 `json:"messages_per_grant"` // requests and replies
}

// Cell is what one variant did under one fault class over Seeds seeds,
// inside its envelope.
type Cell struct {
	Class      faults.Class `json:"class"`
	Seeds      int          `json:"seeds"`      // seeds run
	Violations int          `json:"violations"` // seeds with at least one bug
	Kinds      Kinds        `json:"kinds"`      // of the bugs
	// Unpromised counts the seeds that broke only properties the variant
	// does not promise; Outside those whose run broke an assumption even so
	// (what broke after it is expected, not a bug).
	Unpromised int `json:"unpromised"`
	Outside    int `json:"outside"`
	// Excluded, when set, says why the class draws nothing inside the
	// envelope: the variant assumes its faults away (its cells ran
	// fault-free worlds).
	Excluded string `json:"excluded,omitempty"`
	// FirstSeed is the first seed that failed; -1 when none did.
	FirstSeed int64 `json:"first_seed"`
	// SeedsToFirst counts the seeds run up to and including FirstSeed: how
	// hard the failure is to find.
	SeedsToFirst int `json:"seeds_to_first,omitempty"`
	// MinimalSize is the number of timed faults left in FirstSeed's plan
	// after minimisation; -1 when it was not minimised.
	MinimalSize int `json:"minimal_size"`
	// Replay is the command that replays FirstSeed; Story says what its
	// first bug was.
	Replay string `json:"replay,omitempty"`
	Story  string `json:"story,omitempty"`
	// HTMLLink points to FirstSeed's porcupine HTML, relative to the report.
	HTMLLink string `json:"html_link,omitempty"`
}

// Kinds counts the seeds that showed each kind of violation; a seed with
// several kinds counts under each.
type Kinds struct {
	MutualExclusion int `json:"mutual_exclusion"` // lock level: beliefs overlapped
	LostUpdate      int `json:"lost_update"`      // resource level: the counter lost an increment
	Liveness        int `json:"liveness"`         // waiters starved after faults healed
	Aborted         int `json:"aborted"`          // panic or livelock
}

// LockSafe reports whether no two clients ever believed they held the lock at once.
func (k Kinds) LockSafe() bool { return k.MutualExclusion == 0 }

// ResourceSafe reports whether the protected resource never lost an update.
func (k Kinds) ResourceSafe() bool { return k.LostUpdate == 0 }

// LivenessOK reports whether waiters were always served once faults healed.
func (k Kinds) LivenessOK() bool { return k.Liveness == 0 }

// NewCell returns an empty cell for class: no seed run, none failed.
func NewCell(class faults.Class) Cell {
	return Cell{Class: class, FirstSeed: -1, MinimalSize: -1}
}

// Run is one seed's result, as a cell or a cost counts it.
type Run struct {
	Bugs       []model.ViolationKind // violations of promised properties inside the envelope
	Expected   []model.ViolationKind // of promised properties, after a breach
	Unpromised bool                  // a property the variant does not promise broke
	Outside    bool                  // the run broke an assumption
}

// Record adds one seed's run to the cell. Seeds must be recorded in the
// order they were run for FirstSeed and SeedsToFirst to mean what they say.
func (c *Cell) Record(seed int64, r Run) {
	c.Seeds++
	if r.Outside {
		c.Outside++
	}
	if len(r.Bugs) == 0 {
		if r.Unpromised && len(r.Expected) == 0 {
			c.Unpromised++
		}
		return
	}
	c.Violations++
	c.Kinds.add(r.Bugs)
	if c.FirstSeed < 0 {
		c.FirstSeed, c.SeedsToFirst = seed, c.Seeds
	}
}

// add counts one seed's kinds, each kind once.
func (k *Kinds) add(kinds []model.ViolationKind) {
	var seen Kinds
	for _, x := range kinds {
		switch x {
		case model.MutualExclusion:
			seen.MutualExclusion = 1
		case model.LostUpdate, model.DataLoss:
			seen.LostUpdate = 1
		case model.Liveness, model.Leftover: // L: waiters starved, or items left behind
			seen.Liveness = 1
		default:
			seen.Aborted = 1
		}
	}
	k.MutualExclusion += seen.MutualExclusion
	k.LostUpdate += seen.LostUpdate
	k.Liveness += seen.Liveness
	k.Aborted += seen.Aborted
}

// Cost is what breaking one assumption of a variant costs: Seeds seeds
// drawn to break it (faults of every class; every other assumption kept).
type Cost struct {
	Assumption string `json:"assumption"`
	// Assumed: the variant makes the assumption (else nothing was run).
	Assumed  bool  `json:"assumed"`
	Seeds    int   `json:"seeds"`
	Broke    int   `json:"broke"`    // seeds whose run actually broke it
	Expected int   `json:"expected"` // seeds where a promised property broke after
	Kinds    Kinds `json:"kinds"`    // of those violations
	// Bugs counts seeds that broke a promised property before any breach:
	// bugs of the variant, found on the way.
	Bugs         int    `json:"bugs"`
	FirstSeed    int64  `json:"first_seed"` // first seed with an expected violation; -1: none
	SeedsToFirst int    `json:"seeds_to_first,omitempty"`
	Replay       string `json:"replay,omitempty"`
	// Story says what broke in FirstSeed, and after which breach.
	Story string `json:"story,omitempty"`
}

// NewCost returns an empty cost for assumption, run or not.
func NewCost(assumption string, assumed bool) Cost {
	return Cost{Assumption: assumption, Assumed: assumed, FirstSeed: -1}
}

// Record adds one seed drawn to break the assumption.
func (c *Cost) Record(seed int64, r Run, broke bool) {
	c.Seeds++
	if broke {
		c.Broke++
	}
	if len(r.Bugs) > 0 {
		c.Bugs++
	}
	if len(r.Expected) == 0 {
		return
	}
	c.Expected++
	c.Kinds.add(r.Expected)
	if c.FirstSeed < 0 {
		c.FirstSeed, c.SeedsToFirst = seed, c.Seeds
	}
}

// Status is a cell's outcome at a glance.
type Status int

const (
	// NotRun: no seed was run.
	NotRun Status = iota
	// Safe: no seed showed any violation.
	Safe
	// LivenessOnly: some seeds starved waiters, none broke safety.
	LivenessOnly
	// LockOnly: beliefs overlapped but the resource never lost an update and
	// nothing aborted. For a fenced variant this is fencing doing its job;
	// for an unfenced one the lock is still broken, the bad interleaving of
	// writes just did not happen.
	LockOnly
	// Unsafe: the resource lost an update or a run aborted.
	Unsafe
)

// Status sums the cell up.
func (c Cell) Status() Status {
	k := c.Kinds
	switch {
	case c.Seeds == 0:
		return NotRun
	case !k.ResourceSafe() || k.Aborted > 0:
		return Unsafe
	case !k.LockSafe():
		return LockOnly
	case !k.LivenessOK() || c.Violations > 0:
		return LivenessOnly
	}
	return Safe
}

// JSON writes the matrix as indented JSON, for machines.
func JSON(w io.Writer, m Matrix) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}
