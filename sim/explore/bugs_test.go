package explore

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locksim/locksim/internal/arch386"
	"github.com/locksim/locksim/variants"
)

// The repro files of reports/BUGS.md are regenerated from attributed
// pure seeds by sim/cause's TestRegenerateBugRepros (-update-bugs); the
// catalogue's patterns below only serve BenchmarkTimeToFirstCounterexample.

// firstOfChunk is how many seeds firstOf sweeps between two looks.
const firstOfChunk = 64

// catalogueSeeds is the budget of the issue: every entry within 10,000
// seeds of its default sweep.
const catalogueSeeds = 10_000

// firstOf is the first run from seed from, within n seeds, that shows e:
// sweeps of firstOfChunk seeds at a time on every core, each history kept
// for the catalogue to read.
func firstOf(tb testing.TB, e entry, from uint64, n int) (Outcome, bool) {
	return firstIn(tb, e, e.target(), from, n)
}

// firstIn is firstOf in target tg (e's, with another scheduler).
func firstIn(tb testing.TB, e entry, tg Target, from uint64, n int) (Outcome, bool) {
	opt := DefaultOptions()
	opt.Keep = true
	for next := from; next < from+uint64(n); next += firstOfChunk {
		var hit *Outcome
		_, err := Sweep(tg, SweepOptions{From: next, Count: min(firstOfChunk, int(from+uint64(n)-next)), KeepGoing: true, Run: opt,
			OnOutcome: func(o Outcome) {
				if hit == nil && entryOf(e.variant, o) == e.name {
					hit = &o
				}
			}})
		if err != nil {
			tb.Fatal(err)
		}
		if hit != nil {
			return *hit, true
		}
	}
	return Outcome{}, false
}

// Which bug a failing seed shows is said by attribution, not by the
// catalogue's patterns: sim/cause's TestEveryBugIsCatalogued replays each
// failing seed of the default sweep with each fix of the original's
// family. The patterns above only pick the runs TestRegenerateBugRepros
// minimises for reports/bugs; they once pinned each entry's first seed,
// which named a seed by what else happened during the hold, not by what
// caused the violation.

// TestBugsDocumentReplays replays every counterexample reports/BUGS.md
// names, so the document cannot rot: each must still run the same way
// (its trace hash) and show its violation.
func TestBugsDocumentReplays(t *testing.T) {
	doc, err := os.ReadFile("../../reports/BUGS.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`replay (reports/bugs/[a-z0-9-]+\.json)`).FindAllStringSubmatch(string(doc), -1)
	if len(refs) == 0 {
		t.Fatal("reports/BUGS.md names no replay command")
	}
	for _, e := range catalogue {
		if ref := "replay reports/bugs/" + cmp.Or(e.repro, e.name) + ".json"; !strings.Contains(string(doc), ref) {
			t.Errorf("reports/BUGS.md has no entry for %s (no %q)", e.name, ref)
		}
	}
	for _, ref := range refs {
		t.Run(filepath.Base(ref[1]), func(t *testing.T) {
			r, err := ReadRepro(filepath.Join("../..", ref[1]), variants.Lookup)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Replay(r, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%016x", out.Hash); got != r.TraceHash {
				t.Errorf("%s replays with trace hash %s, recorded %s: the run takes another path", ref[1], got, r.TraceHash)
			}
			for _, want := range r.Verdict.Violations {
				if _, ok := out.Verdict.First(want.Kind); !ok {
					t.Errorf("%s no longer shows %s (%s); got %+v", ref[1], want.Kind, want.Story, out.Verdict.Violations)
				}
			}
			if len(r.Verdict.Violations) == 0 {
				t.Errorf("%s records no violation", ref[1])
			}
		})
	}
}

// Every counterexample of reports/BUGS.md, recorded on a 64-bit machine,
// replays to its recorded trace hash on a 32-bit build too (GOARCH=386):
// this package's tests built for 386 run TestBugsDocumentReplays.
func TestBugsDocumentReplaysOn386(t *testing.T) {
	bin := arch386.TestBinary(t)
	out, err := arch386.Run(t, bin, nil, "-test.run=^TestBugsDocumentReplays$", "-test.count=1", "-test.v")
	if err != nil {
		t.Fatalf("the repros of reports/BUGS.md do not replay the same on 386: %v\n%s", err, out)
	}
	t.Logf("on 386: %d repros replayed to their recorded hashes", bytes.Count(out, []byte("--- PASS: TestBugsDocumentReplays/")))
}
