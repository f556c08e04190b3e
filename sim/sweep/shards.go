package sweep

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/seedrun"
)

// Forever, as SweepOptions.Count, is a sweep that runs until Stop closes.
const Forever = math.MaxInt

// SweepReport is a sweep's result as data: what locksim sweep -json
// prints, and what MergeShards reads back and writes. Its JSON is a
// format other tools read; fields are added, never renamed.
type SweepReport struct {
	Version string       `json:"locksim_version"`
	Target  TargetReport `json:"target"`
	Seeds   SeedsReport  `json:"seeds"`
	Runs    int          `json:"runs"`
	Events  int64        `json:"events"`
	// Inside counts the seeds that broke no assumption of the envelope;
	// Expected those whose promised properties broke only outside it, by
	// the first assumption broken; Unpromised those that broke only what
	// the variant does not promise. None of them fails unless strict.
	Inside     int           `json:"inside"`
	Expected   int           `json:"expected"`
	ExpectedBy []BreachCount `json:"expected_by"`
	Unpromised int           `json:"unpromised"`
	// LivenessFailed counts the failing seeds whose failures were all of
	// liveness.
	LivenessFailed int `json:"liveness_failed"`
	// Interrupted: the sweep was stopped (Ctrl-C) before its last seed;
	// Resume is the command that runs the seeds it did not.
	Interrupted bool            `json:"interrupted,omitempty"`
	Resume      string          `json:"resume,omitempty"`
	Failures    []FailureReport `json:"failures"`
}

// BreachCount is how many expected seeds first broke one assumption.
type BreachCount struct {
	Assumption algorithm.Assumption `json:"assumption"`
	Seeds      int                  `json:"seeds"`
}

// TargetReport is what a sweep explored, by the variant's name.
type TargetReport struct {
	Variant string                 `json:"variant"`
	Classes []faults.Class         `json:"classes"`
	Beyond  []algorithm.Assumption `json:"beyond,omitempty"`
	Strict  bool                   `json:"strict,omitempty"`
	Config  sim.Config             `json:"config"`
	// World lists the fields each seed draws; Config gives the others.
	World []envelope.WorldField `json:"world,omitempty"`
}

// SeedsReport is the seeds a sweep selected: SweepOptions' From, Count
// and shard.
type SeedsReport struct {
	From       uint64 `json:"from"`
	Count      int    `json:"count"`
	ShardIndex int    `json:"shard_index,omitempty"`
	ShardCount int    `json:"shard_count,omitempty"`
}

// Options is the selection as SweepOptions, for its seed arithmetic.
func (s SeedsReport) Options() SweepOptions {
	return SweepOptions{From: s.From, Count: s.Count, ShardIndex: s.ShardIndex, ShardCount: s.ShardCount}
}

// FailureReport is one failing seed of a sweep.
type FailureReport struct {
	Seed uint64 `json:"seed"`
	// World is the seed's world, in words, when the sweep drew one.
	World    string                `json:"world,omitempty"`
	Kinds    []model.ViolationKind `json:"kinds"`
	Findings []seedrun.Finding     `json:"findings"` // so a merge prints what the sweep printed
	Replay   string                `json:"replay"`
	Repro    string                `json:"repro"`
}

// NewSweepReport is the report of a sweep of t over o's seeds, before any
// seed has run. strict is whether every violation fails.
func NewSweepReport(t seedrun.Target, strict bool, o SweepOptions) SweepReport {
	return SweepReport{
		Version:  seedrun.Version,
		Target:   TargetReport{t.Variant.Name, t.Classes, t.Beyond, strict, t.Config, t.World},
		Seeds:    SeedsReport{o.From, o.Count, o.ShardIndex, o.ShardCount},
		Failures: []FailureReport{},
	}
}

// NewFailureReport describes a failing outcome of a sweep of t, with the
// command that replays it and its repro file ("" if none was written).
func NewFailureReport(o seedrun.Outcome, t seedrun.Target, replay, repro string) FailureReport {
	var kinds []model.ViolationKind
	for _, x := range o.Verdict.Violations {
		if !slices.Contains(kinds, x.Kind) {
			kinds = append(kinds, x.Kind)
		}
	}
	return FailureReport{o.Seed, envelope.DescribeWorld(o.Config, t.World), kinds, o.Findings, replay, repro}
}

// Count copies res's counts into the report (its failures are added one
// by one, as they are seen).
func (r *SweepReport) Count(res SweepResult) {
	r.Runs, r.Events = res.Runs, res.Events
	r.Inside, r.Expected, r.Unpromised = res.Inside, res.Expected, res.Unpromised
	r.LivenessFailed = res.LivenessFailed
	r.ExpectedBy = ExpectedCounts(res.ExpectedBy)
}

// ExpectedCounts lists the expected seeds by assumption, in the order of
// algorithm.EveryAssumption; never nil.
func ExpectedCounts(by map[algorithm.Assumption]int) []BreachCount {
	out := []BreachCount{}
	for _, a := range algorithm.EveryAssumption {
		if n := by[a]; n > 0 {
			out = append(out, BreachCount{a, n})
		}
	}
	return out
}

// DescribeSeeds is the selection in words: "1..40 (40), shard 1/4 (10
// seeds), keep going".
func (o SweepOptions) DescribeSeeds() string {
	if o.Count == 0 {
		return "none"
	}
	if o.Count == Forever {
		return fmt.Sprintf("%d.. until interrupted", o.From)
	}
	s := fmt.Sprintf("%d..%d (%d)", o.From, o.From+uint64(o.Count)-1, o.Count)
	if o.ShardCount > 0 {
		s += fmt.Sprintf(", shard %d/%d (%d seeds)", o.ShardIndex, o.ShardCount, o.Len())
	}
	if o.KeepGoing {
		s += ", keep going"
	}
	return s
}

// DescribeDraws says where a target's seeds draw their faults.
func DescribeDraws(beyond []algorithm.Assumption) string {
	if len(beyond) == 0 {
		return "inside the envelope, up to its edges (-beyond breaks assumptions on purpose)"
	}
	names := make([]string, len(beyond))
	for i, n := range beyond {
		names[i] = string(n)
	}
	return "beyond the envelope: each seed breaks one or more of " + strings.Join(names, ", ")
}

// Shard is one sweep report and where it was read from.
type Shard struct {
	Name string // the file, "stdin", or "a.json (sweep 2)" when a stream holds several
	SweepReport
}

// Index and Total are the shard's K and N; an unsharded sweep is shard 0/1.
func (s Shard) Index() int { return s.Seeds.ShardIndex }
func (s Shard) Total() int { return max(1, s.Seeds.ShardCount) }

func (s Shard) label() string { return shardLabel(s.Index(), s.Total()) }

// what says what the report is a sweep of: "shard 1/4", "an unsharded sweep".
func (s Shard) what() string {
	if s.Seeds.ShardCount == 0 {
		return "an unsharded sweep"
	}
	return "shard " + s.label()
}

// seedRange is the whole sweep's seeds, "1..40 (40)".
func (s Shard) seedRange() string {
	return SweepOptions{From: s.Seeds.From, Count: s.Seeds.Count}.DescribeSeeds()
}

func shardLabel(k, n int) string { return fmt.Sprintf("%d/%d", k, n) }

// DecodeShards reads one or more sweep reports (sweep -json outputs) from
// r, strictly: anything else (a repro file, a compare matrix, null, more
// than MaxShardBytes) is refused. name says where r comes from, in errors
// and in each Shard.
func DecodeShards(name string, r io.Reader) ([]Shard, error) {
	dec := json.NewDecoder(seedrun.LimitReader(r, name, "sweep -json output", seedrun.MaxShardBytes))
	dec.DisallowUnknownFields()
	var out []Shard
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		var tooLarge *seedrun.TooLargeError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		if err == nil {
			err = faults.CheckJSONObject(raw, seedrun.MaxShardBytes)
		}
		var s SweepReport
		if err == nil {
			err = decodeStrict(raw, &s)
		}
		if err != nil {
			return nil, fmt.Errorf("%s is not locksim sweep -json output: %v", name, err)
		}
		out = append(out, Shard{name, s})
	}
	switch {
	case len(out) == 0:
		return nil, fmt.Errorf("%s is empty: no sweep -json output in it", name)
	case len(out) > 1:
		for i := range out {
			out[i].Name = fmt.Sprintf("%s (sweep %d)", name, i+1)
		}
	}
	return out, nil
}

// MergedSweep is a sweep put back together from its shards.
type MergedSweep struct {
	Result  SweepReport // in the shape of an unsharded sweep's report
	Shards  int         // N
	Missing []int       // indexes of shards not given (only when partial)
	Stopped []int       // indexes of shards that stopped at their first violation
	Total   int         // seeds in the sweep's range
}

// maxShards bounds N, so a damaged file cannot make a merge allocate for
// billions of shards.
const maxShards = 1 << 20

// MergeShards checks that shards are the shards of one sweep (the same
// version, variant, classes, config and seed range, the same N, every K
// at most once, each consistent with its seeds) and puts them back
// together: counts summed, failures in seed order. Each seed's result does
// not depend on the machine that ran it, so when every shard kept going
// the merge is the unsharded sweep's report. Missing shards are an error
// unless partial.
func MergeShards(shards []Shard, partial bool) (MergedSweep, error) {
	if len(shards) == 0 {
		return MergedSweep{}, errors.New("no shards to merge")
	}
	first := shards[0]
	for _, s := range shards[1:] {
		if err := sameSweep(first, s); err != nil {
			return MergedSweep{}, err
		}
	}
	n := first.Total()
	if n > maxShards {
		return MergedSweep{}, fmt.Errorf("%s: shard count %d is more than merge takes (%d)", first.Name, n, maxShards)
	}
	m := MergedSweep{Shards: n, Total: first.Seeds.Count, Result: SweepReport{
		Version: first.Version,
		Target:  first.Target,
		Seeds:   SeedsReport{From: first.Seeds.From, Count: first.Seeds.Count},
	}}
	byIndex := make([]*Shard, n)
	for i := range shards {
		s := &shards[i]
		stopped, err := s.check()
		if err != nil {
			return MergedSweep{}, err
		}
		if prev := byIndex[s.Index()]; prev != nil {
			return MergedSweep{}, fmt.Errorf("shard %s is given twice: %s and %s", s.label(), prev.Name, s.Name)
		}
		byIndex[s.Index()] = s
		if stopped {
			m.Stopped = append(m.Stopped, s.Index())
		}
		m.Result.add(s.SweepReport)
	}
	for k, s := range byIndex {
		if s == nil {
			m.Missing = append(m.Missing, k)
		}
	}
	if len(m.Missing) > 0 && !partial {
		verb := "is"
		if len(m.Missing) > 1 {
			verb = "are"
		}
		return MergedSweep{}, fmt.Errorf("%s %s missing (merge every shard, or give -partial to merge what is there)", shardList(m.Missing, n), verb)
	}
	slices.Sort(m.Stopped)
	slices.SortFunc(m.Result.Failures, func(a, b FailureReport) int { return cmp.Compare(a.Seed, b.Seed) })
	if m.Result.Failures == nil {
		m.Result.Failures = []FailureReport{}
	}
	if m.Result.ExpectedBy == nil {
		m.Result.ExpectedBy = []BreachCount{}
	}
	return m, nil
}

// add sums s's counts and failures into r.
func (r *SweepReport) add(s SweepReport) {
	r.Runs += s.Runs
	r.Events += s.Events
	r.Inside += s.Inside
	r.Expected += s.Expected
	r.Unpromised += s.Unpromised
	r.LivenessFailed += s.LivenessFailed
	r.ExpectedBy = addBreachCounts(r.ExpectedBy, s.ExpectedBy)
	r.Failures = append(r.Failures, s.Failures...)
}

// DescribeShards says what the merge is of: "merged from 3 of 4 shards
// (missing: shard 2/4)".
func (m MergedSweep) DescribeShards() string {
	switch {
	case m.Shards == 1:
		return "merged from 1 shard"
	case len(m.Missing) == 0:
		return fmt.Sprintf("merged from %d shards", m.Shards)
	}
	return fmt.Sprintf("merged from %d of %d shards (missing: %s)", m.Shards-len(m.Missing), m.Shards, shardList(m.Missing, m.Shards))
}

// NotRun explains, for a summary line, why seeds were not run: "" when
// every seed ran.
func (m MergedSweep) NotRun() string {
	var why []string
	if len(m.Stopped) > 0 {
		why = append(why, fmt.Sprintf("%s stopped at the first failure", shardList(m.Stopped, m.Shards)))
	}
	if len(m.Missing) > 0 {
		why = append(why, fmt.Sprintf("%s missing", shardList(m.Missing, m.Shards)))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d not run: %s)", m.Total-m.Result.Runs, strings.Join(why, "; "))
}

// shardList names shards: "shard 2/4", "shards 1/4, 3/4".
func shardList(ks []int, n int) string {
	labels := make([]string, len(ks))
	for i, k := range ks {
		labels[i] = shardLabel(k, n)
	}
	if len(ks) == 1 {
		return "shard " + labels[0]
	}
	return "shards " + strings.Join(labels, ", ")
}

// addBreachCounts sums two tallies of expected seeds, in the order
// algorithm.EveryAssumption lists the assumptions (as a sweep writes them).
func addBreachCounts(a, b []BreachCount) []BreachCount {
	var out []BreachCount
	for _, n := range algorithm.EveryAssumption {
		seeds := 0
		for _, x := range append(slices.Clip(a), b...) {
			if x.Assumption == n {
				seeds += x.Seeds
			}
		}
		if seeds > 0 {
			out = append(out, BreachCount{n, seeds})
		}
	}
	return out
}

// sameSweep says how b is not a shard of the sweep a is a shard of.
func sameSweep(a, b Shard) error {
	at, bt := a.Target, b.Target
	switch {
	case a.Version != b.Version:
		return fmt.Errorf("not shards of one sweep: %s was run by %s, %s by %s (a seed may draw another plan in another version)",
			a.Name, a.version(), b.Name, b.version())
	case at.Variant != bt.Variant:
		return fmt.Errorf("not shards of one sweep: %s sweeps variant %s, %s variant %s", a.Name, at.Variant, b.Name, bt.Variant)
	case !slices.Equal(at.Classes, bt.Classes):
		return fmt.Errorf("not shards of one sweep: %s sweeps faults %s, %s faults %s", a.Name, rawClasses(at.Classes), b.Name, rawClasses(bt.Classes))
	case !slices.Equal(at.Beyond, bt.Beyond):
		return fmt.Errorf("not shards of one sweep: %s draws %s, %s %s", a.Name, DescribeDraws(at.Beyond), b.Name, DescribeDraws(bt.Beyond))
	case at.Strict != bt.Strict:
		return fmt.Errorf("not shards of one sweep: one of %s and %s ran with -strict, the other without", a.Name, b.Name)
	case at.Config != bt.Config:
		return fmt.Errorf("not shards of one sweep: %s and %s differ in config %s", a.Name, b.Name, configDiff(at.Config, bt.Config))
	case a.Seeds.From != b.Seeds.From || a.Seeds.Count != b.Seeds.Count:
		return fmt.Errorf("not shards of one sweep: %s sweeps seeds %s, %s seeds %s",
			a.Name, a.seedRange(), b.Name, b.seedRange())
	case a.Total() != b.Total():
		return fmt.Errorf("not shards of one sweep: %s is %s, %s %s", a.Name, a.what(), b.Name, b.what())
	}
	return nil
}

// version names the locksim version that wrote a shard; output from
// before sweep -json recorded it has none.
func (s Shard) version() string {
	if s.Version == "" {
		return "an older locksim"
	}
	return s.Version
}

// rawClasses is the classes as given to -faults, in the order given (the
// order is part of the replay commands, so shards must agree on it).
func rawClasses(cs []faults.Class) string {
	if len(cs) == 0 {
		return "none"
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// configDiff names the first config field where a and b differ.
func configDiff(a, b sim.Config) string {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range av.NumField() {
		if x, y := av.Field(i).Interface(), bv.Field(i).Interface(); x != y {
			name, _, _ := strings.Cut(av.Type().Field(i).Tag.Get("json"), ",")
			return fmt.Sprintf("%s (%v vs %v)", name, x, y)
		}
	}
	return ""
}

// check checks that a shard's result is consistent with its seeds, as a
// whole sweep's report is, and reports whether it stopped at its first
// violation before running all of them.
func (s Shard) check() (stopped bool, err error) {
	if s.Seeds.ShardCount < 0 || s.Index() < 0 || s.Index() >= s.Total() {
		return false, fmt.Errorf("%s: shard %d/%d is not K/N with 0 <= K < N", s.Name, s.Index(), s.Seeds.ShardCount)
	}
	if s.Seeds.Count < 0 {
		return false, fmt.Errorf("%s: seed count %d is negative", s.Name, s.Seeds.Count)
	}
	if s.Seeds.Count > 0 {
		if err := CheckSeeds(s.Seeds.From, s.Seeds.Count); err != nil {
			return false, fmt.Errorf("%s: %v", s.Name, err)
		}
	}
	o := s.Seeds.Options()
	size := o.Len()
	if s.Runs < 0 || s.Runs > size || s.Events < 0 {
		return false, fmt.Errorf("%s: %d runs and %d events do not fit shard %s of %d seeds", s.Name, s.Runs, s.Events, s.label(), size)
	}
	last := -1
	for _, x := range s.Failures {
		p, ok := o.IndexOf(x.Seed)
		switch {
		case !ok:
			return false, fmt.Errorf("%s: failing seed %d is not in shard %s of seeds %s", s.Name, x.Seed, s.label(), s.seedRange())
		case p <= last:
			return false, fmt.Errorf("%s: failing seed %d is out of seed order", s.Name, x.Seed)
		case p >= s.Runs:
			return false, fmt.Errorf("%s: failing seed %d is beyond the %d seeds the shard ran", s.Name, x.Seed, s.Runs)
		}
		last = p
	}
	if s.Runs == size {
		return false, nil
	}
	// A sweep runs fewer seeds than it has only when it stops at its
	// first violation: then that is its last run.
	if len(s.Failures) != 1 || last != s.Runs-1 {
		return false, fmt.Errorf("%s: ran %d of its %d seeds but did not stop at its first violation; is the output complete?", s.Name, s.Runs, size)
	}
	return true, nil
}

// decodeStrict decodes one JSON value into v: unknown fields are errors.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
