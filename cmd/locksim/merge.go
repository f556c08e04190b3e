package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
)

// sweepShard is one sweep -json output and where it was read from.
type sweepShard struct {
	name string // the file, "stdin", or "a.json (sweep 2)" when a stream holds several
	sweepJSON
}

// index and count are the shard's K and N; an unsharded sweep is shard 0/1.
func (s sweepShard) index() int { return s.Seeds.ShardIndex }
func (s sweepShard) count() int { return max(1, s.Seeds.ShardCount) }

func (s sweepShard) label() string { return shardLabel(s.index(), s.count()) }

// what says what the output is a sweep of: "shard 1/4", "an unsharded sweep".
func (s sweepShard) what() string {
	if s.Seeds.ShardCount == 0 {
		return "an unsharded sweep"
	}
	return "shard " + s.label()
}

// seedRange is the whole sweep's seeds, "1..40 (40)".
func (s sweepShard) seedRange() string {
	return describeSeeds(explore.SweepOptions{From: s.Seeds.From, Count: s.Seeds.Count})
}

func shardLabel(k, n int) string { return fmt.Sprintf("%d/%d", k, n) }

// mergedSweep is a sweep put back together from its shards.
type mergedSweep struct {
	result  sweepJSON // in the shape of an unsharded sweep -json
	shards  int       // N
	missing []int     // indexes of shards not given (only with -partial)
	stopped []int     // indexes of shards that stopped at their first violation
	total   int       // seeds in the sweep's range
}

func mergeCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("merge", "locksim merge [-partial] [-json] FILE... (- reads standard input)",
		"Reads the -json outputs of locksim sweep -shard K/N, one per shard (a file may hold\n"+
			"several; - reads standard input), checks that they are the shards of one sweep (the same\n"+
			"variant, fault classes, config and seed range, the same N, every K once) and prints them\n"+
			"as one sweep: the header, every failure in seed order with its replay command, and the\n"+
			"runs, failures and events summed. Each seed's result does not depend on the machine that\n"+
			"ran it, so when every shard ran with -keep-going the merged result is the unsharded\n"+
			"sweep's, and -json prints exactly what sweep -keep-going -json prints without -shard\n"+
			"(repro paths are each shard's -out, on the machine that ran it). Without -keep-going\n"+
			"each shard stops at its own first violation: the lowest failing seed is then the whole\n"+
			"sweep's first failure, but the others are only the first of their shards, and the seeds\n"+
			"after them were not run; merge says so. A missing shard is an error unless -partial.\n"+
			"Exit 0: no failure; 1: failures; 2: bad usage or input, such as shards of different\n"+
			"sweeps or a missing shard. How to run shards on CI or Kubernetes: docs/SCALING.md.",
		"locksim merge shard-0.json shard-1.json shard-2.json shard-3.json",
		"cat shards/*.json | locksim merge -json - > merged.json",
		"locksim merge -partial shard-*.json   # while some machines are still running")
	partial := f.Bool("partial", false, "merge even if shards are missing, saying which and how many seeds they hold")
	asJSON := f.Bool("json", false, "print the merged result as JSON, in the shape of an unsharded sweep -json")
	pos, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(pos) == 0 {
		return f.fail(stderr, fmt.Errorf("give the -json outputs of sweep -shard K/N to merge, as files or - for standard input"))
	}
	shards, err := readShards(pos, os.Stdin)
	if err != nil {
		return f.fail(stderr, err)
	}
	m, err := mergeShards(shards, *partial)
	if err != nil {
		return f.fail(stderr, err)
	}

	head := stdout
	if *asJSON {
		head = stderr
	}
	r := m.result
	describeTarget(head, explore.Target{Variant: algorithm.Variant{Name: r.Target.Variant}, Classes: r.Target.Classes,
		Beyond: r.Target.Beyond, Config: r.Target.Config, World: r.Target.World})
	fmt.Fprintf(head, "seeds:   %s, %s\n", describeSeeds(explore.SweepOptions{From: r.Seeds.From, Count: r.Seeds.Count}), m.describeShards())
	if *asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return f.fail(stderr, err)
		}
	} else {
		for _, x := range r.Failures {
			printFailure(stdout, x, r.Target.Variant)
		}
		fmt.Fprintf(stdout, "merge: %d of %d seeds run%s, %d failing, %d events\n",
			r.Runs, m.total, m.notRun(), len(r.Failures), r.Events)
		fmt.Fprintf(stdout, "       %d inside the envelope, %s, %d broke only what the variant does not promise\n",
			r.Inside, describeExpected(r.Expected, r.ExpectedBy), r.Unpromised)
	}
	if len(m.stopped) > 0 {
		fmt.Fprintf(head, "note: without -keep-going each shard stops at its own first failure: seed %d, the lowest failing seed, "+
			"is the sweep's first failure, but the others are only the first of their shards.\n", r.Failures[0].Seed)
	}
	if len(r.Failures) > 0 {
		return exitViolation
	}
	return exitOK
}

func (m mergedSweep) describeShards() string {
	switch {
	case m.shards == 1:
		return "merged from 1 shard"
	case len(m.missing) == 0:
		return fmt.Sprintf("merged from %d shards", m.shards)
	}
	return fmt.Sprintf("merged from %d of %d shards (missing: %s)", m.shards-len(m.missing), m.shards, shardList(m.missing, m.shards))
}

// notRun explains, in the summary line, why seeds were not run.
func (m mergedSweep) notRun() string {
	var why []string
	if len(m.stopped) > 0 {
		why = append(why, fmt.Sprintf("%s stopped at the first failure", shardList(m.stopped, m.shards)))
	}
	if len(m.missing) > 0 {
		why = append(why, fmt.Sprintf("%s missing", shardList(m.missing, m.shards)))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d not run: %s)", m.total-m.result.Runs, strings.Join(why, "; "))
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

// readShards reads every sweep -json output named; "-" is stdin.
func readShards(paths []string, stdin io.Reader) ([]sweepShard, error) {
	var out []sweepShard
	for _, p := range paths {
		name, r := p, stdin
		if p == "-" {
			name = "stdin"
		} else {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			r = bytes.NewReader(data)
		}
		ss, err := decodeSweeps(name, r)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

// decodeSweeps reads one or more sweep -json outputs from r, strictly:
// anything else (a repro file, a compare matrix) is refused.
func decodeSweeps(name string, r io.Reader) ([]sweepShard, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var out []sweepShard
	for {
		var s sweepJSON
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s is not locksim sweep -json output: %v", name, err)
		}
		out = append(out, sweepShard{name, s})
	}
	switch {
	case len(out) == 0:
		return nil, fmt.Errorf("%s is empty: no sweep -json output in it", name)
	case len(out) > 1:
		for i := range out {
			out[i].name = fmt.Sprintf("%s (sweep %d)", name, i+1)
		}
	}
	return out, nil
}

// maxShards bounds N, so a damaged file cannot make merge allocate for
// billions of shards.
const maxShards = 1 << 20

// mergeShards checks that shards are the shards of one sweep and puts them
// back together. Missing shards are an error unless partial.
func mergeShards(shards []sweepShard, partial bool) (mergedSweep, error) {
	first := shards[0]
	for _, s := range shards[1:] {
		if err := sameSweep(first, s); err != nil {
			return mergedSweep{}, err
		}
	}
	n := first.count()
	if n > maxShards {
		return mergedSweep{}, fmt.Errorf("%s: shard count %d is more than merge takes (%d)", first.name, n, maxShards)
	}
	m := mergedSweep{shards: n, total: first.Seeds.Count, result: sweepJSON{
		Version: first.Version,
		Target:  first.Target,
		Seeds:   seedsJSON{From: first.Seeds.From, Count: first.Seeds.Count},
	}}
	byIndex := make([]*sweepShard, n)
	for i := range shards {
		s := &shards[i]
		stopped, err := checkShard(*s)
		if err != nil {
			return mergedSweep{}, err
		}
		if prev := byIndex[s.index()]; prev != nil {
			return mergedSweep{}, fmt.Errorf("shard %s is given twice: %s and %s", s.label(), prev.name, s.name)
		}
		byIndex[s.index()] = s
		if stopped {
			m.stopped = append(m.stopped, s.index())
		}
		m.result.Runs += s.Runs
		m.result.Events += s.Events
		m.result.Inside += s.Inside
		m.result.Expected += s.Expected
		m.result.Unpromised += s.Unpromised
		m.result.LivenessFailed += s.LivenessFailed
		m.result.ExpectedBy = addBreachCounts(m.result.ExpectedBy, s.ExpectedBy)
		m.result.Failures = append(m.result.Failures, s.Failures...)
	}
	for k, s := range byIndex {
		if s == nil {
			m.missing = append(m.missing, k)
		}
	}
	if len(m.missing) > 0 && !partial {
		verb := "is"
		if len(m.missing) > 1 {
			verb = "are"
		}
		return mergedSweep{}, fmt.Errorf("%s %s missing (merge every shard, or give -partial to merge what is there)", shardList(m.missing, n), verb)
	}
	slices.Sort(m.stopped)
	slices.SortFunc(m.result.Failures, func(a, b failureJSON) int {
		return cmp.Compare(a.Seed, b.Seed)
	})
	if m.result.Failures == nil {
		m.result.Failures = []failureJSON{}
	}
	if m.result.ExpectedBy == nil {
		m.result.ExpectedBy = []breachCount{}
	}
	return m, nil
}

// addBreachCounts sums two tallies of expected seeds, in the order
// algorithm.EveryAssumption lists the assumptions (as sweep writes them).
func addBreachCounts(a, b []breachCount) []breachCount {
	var out []breachCount
	for _, n := range algorithm.EveryAssumption {
		seeds := 0
		for _, x := range append(slices.Clip(a), b...) {
			if x.Assumption == n {
				seeds += x.Seeds
			}
		}
		if seeds > 0 {
			out = append(out, breachCount{n, seeds})
		}
	}
	return out
}

// sameSweep says how b is not a shard of the sweep a is a shard of.
func sameSweep(a, b sweepShard) error {
	at, bt := a.Target, b.Target
	switch {
	case a.Version != b.Version:
		return fmt.Errorf("not shards of one sweep: %s was run by %s, %s by %s (a seed may draw another plan in another version)",
			a.name, versionOf(a), b.name, versionOf(b))
	case at.Variant != bt.Variant:
		return fmt.Errorf("not shards of one sweep: %s sweeps variant %s, %s variant %s", a.name, at.Variant, b.name, bt.Variant)
	case !slices.Equal(at.Classes, bt.Classes):
		return fmt.Errorf("not shards of one sweep: %s sweeps faults %s, %s faults %s", a.name, rawClasses(at.Classes), b.name, rawClasses(bt.Classes))
	case !slices.Equal(at.Beyond, bt.Beyond):
		return fmt.Errorf("not shards of one sweep: %s draws %s, %s %s", a.name, describeDraws(at.Beyond), b.name, describeDraws(bt.Beyond))
	case at.Strict != bt.Strict:
		return fmt.Errorf("not shards of one sweep: one of %s and %s ran with -strict, the other without", a.name, b.name)
	case at.Config != bt.Config:
		return fmt.Errorf("not shards of one sweep: %s and %s differ in config %s", a.name, b.name, configDiff(at.Config, bt.Config))
	case a.Seeds.From != b.Seeds.From || a.Seeds.Count != b.Seeds.Count:
		return fmt.Errorf("not shards of one sweep: %s sweeps seeds %s, %s seeds %s",
			a.name, a.seedRange(), b.name, b.seedRange())
	case a.count() != b.count():
		return fmt.Errorf("not shards of one sweep: %s is %s, %s %s", a.name, a.what(), b.name, b.what())
	}
	return nil
}

// versionOf names the locksim version that wrote a shard; output from
// before sweep -json recorded it has none.
func versionOf(s sweepShard) string {
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

// checkShard checks that a shard's result is consistent with its seeds,
// as a whole sweep -json output is, and reports whether it stopped at its
// first violation before running all of them.
func checkShard(s sweepShard) (stopped bool, err error) {
	n, k := s.count(), s.index()
	if s.Seeds.ShardCount < 0 || k < 0 || k >= n {
		return false, fmt.Errorf("%s: shard %d/%d is not K/N with 0 <= K < N", s.name, k, s.Seeds.ShardCount)
	}
	if s.Seeds.Count < 0 {
		return false, fmt.Errorf("%s: seed count %d is negative", s.name, s.Seeds.Count)
	}
	size := explore.SweepOptions{From: s.Seeds.From, Count: s.Seeds.Count, ShardIndex: k, ShardCount: n}.Len()
	if s.Runs < 0 || s.Runs > size || s.Events < 0 {
		return false, fmt.Errorf("%s: %d runs and %d events do not fit shard %s of %d seeds", s.name, s.Runs, s.Events, s.label(), size)
	}
	// position is a seed's place among the shard's seeds, or -1.
	position := func(seed uint64) int {
		if seed < s.Seeds.From || seed-s.Seeds.From >= uint64(s.Seeds.Count) {
			return -1
		}
		off := int(seed - s.Seeds.From)
		if off%n != k {
			return -1
		}
		return off / n
	}
	last := -1
	for _, x := range s.Failures {
		p := position(x.Seed)
		switch {
		case p < 0:
			return false, fmt.Errorf("%s: failing seed %d is not in shard %s of seeds %s", s.name, x.Seed, s.label(), s.seedRange())
		case p <= last:
			return false, fmt.Errorf("%s: failing seed %d is out of seed order", s.name, x.Seed)
		case p >= s.Runs:
			return false, fmt.Errorf("%s: failing seed %d is beyond the %d seeds the shard ran", s.name, x.Seed, s.Runs)
		}
		last = p
	}
	if s.Runs == size {
		return false, nil
	}
	// A sweep runs fewer seeds than it has only when it stops at its
	// first violation: then that is its last run.
	if len(s.Failures) != 1 || last != s.Runs-1 {
		return false, fmt.Errorf("%s: ran %d of its %d seeds but did not stop at its first violation; is the output complete?", s.name, s.Runs, size)
	}
	return true, nil
}
