package reports

import (
	"encoding/json"
	"io"

	"locksim/faults"
	"locksim/model"
)

// Matrix compares lock variants across fault classes: one row per variant,
// one cell per class, each cell the outcome of the same Seeds seeds.
// The compare command fills it; Markdown, JSON and HTML render it.
type Matrix struct {
	Seeds   int            `json:"seeds"`   // seeds run per cell
	Classes []faults.Class `json:"classes"` // the columns, in order
	Rows    []Row          `json:"rows"`
}

// Row is one variant's line of the matrix.
type Row struct {
	Variant     string         `json:"variant"`               // registry name, e.g. "original"
	Summary     string         `json:"summary"`               // what the variant changes, one line
	Assumptions string         `json:"assumptions,omitempty"` // what it relies on, e.g. "bounded clock drift"
	Cells       []Cell         `json:"cells"`                 // one per Matrix.Classes, same order
	Metrics     VariantMetrics `json:"metrics"`
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

// Cell is what one variant did under one fault class over Seeds seeds.
type Cell struct {
	Class      faults.Class `json:"class"`
	Seeds      int          `json:"seeds"`      // seeds run
	Violations int          `json:"violations"` // seeds with at least one violation
	Kinds      Kinds        `json:"kinds"`
	// FirstSeed is the first seed that failed; -1 when none did.
	FirstSeed int64 `json:"first_seed"`
	// SeedsToFirst counts the seeds run up to and including FirstSeed: how
	// hard the failure is to find.
	SeedsToFirst int `json:"seeds_to_first,omitempty"`
	// MinimalSize is the number of timed faults left in FirstSeed's plan
	// after minimisation; -1 when it was not minimised.
	MinimalSize int `json:"minimal_size"`
	// Replay is the command that replays FirstSeed.
	Replay string `json:"replay,omitempty"`
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

// Record adds one seed's verdict to the cell. Seeds must be recorded in the
// order they were run for FirstSeed and SeedsToFirst to mean what they say.
func (c *Cell) Record(seed int64, v model.Verdict) {
	c.Seeds++
	if v.OK() {
		return
	}
	c.Violations++
	var seen Kinds
	for _, x := range v.Violations {
		switch x.Kind {
		case model.MutualExclusion:
			seen.MutualExclusion = 1
		case model.LostUpdate:
			seen.LostUpdate = 1
		case model.Liveness:
			seen.Liveness = 1
		default:
			seen.Aborted = 1
		}
	}
	c.Kinds.MutualExclusion += seen.MutualExclusion
	c.Kinds.LostUpdate += seen.LostUpdate
	c.Kinds.Liveness += seen.Liveness
	c.Kinds.Aborted += seen.Aborted
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
