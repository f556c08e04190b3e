package variants_test

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// The mutation suite measures the harness, not the variants: each mutant is
// a corrected lock with one plausible mistake (variants/export_test.go),
// and the default sweep, inside the base's envelope, must flag it while the
// unmutated base stays clean on the same seeds.

// knownSurvivors are mutants the default sweep does not flag yet, with why:
// a finding about the generators, kept until they reach that edge. The test
// fails once one is flagged, so the list stays true.
var knownSurvivors = map[string]string{
	"corrected~no-early-stop": "it only wastes writes while a majority is out of reach, and starves waiters only when " +
		"that happens under heavy contention in a wide world: flagged at seed 25,795 of class all (1 of 30,000 seeds; 5 before corrected asked a timed-out write again)",
	"fenced~token-no-tie-break": "since fenced's high part takes the holder's clock, two holders whose beliefs overlap " +
		"draw the same high part only when their draws meet on counters ahead of both their clocks (one before the " +
		"epoch reads 0) or read the same millisecond: a lost update in 6 of 100,000 seeds, first at seed 6,850 (both hosts' " +
		"clocks before the epoch, and a topology change to fresh counters; within the budget while high parts were bare counters, which wiped restarts repeated). " +
		"TestFencedTieBitsTellRepeatedHighPartsApart holds it",
	"fenced~catch-up-impatient": "one try per call fails a draw whenever a round trip to one of a bare majority of the key's " +
		"nodes loses a message, and starves waiters only where such a majority is up under loss near the bound and the TTL is short " +
		"(the liveness bound is three TTLs); it breaks no safety. Flagged at seed 12,903 (TTL 5.7 s, four replicas, 7.7% loss and " +
		"1.6% reply loss; 11 of 100,000 seeds). TestBareMajorityUnderLossFlagsFencedSurvivors holds it: three of five replicas up " +
		"under 10% loss, TTL 5 s, twelve clients, it starves in 63 of 100 seeds and fenced in none",
	"fenced~failed-draw-kept": "a draw fails inside fenced's envelope only when a message to one of a bare majority of the " +
		"key's nodes is lost three times running, or the validity runs out during it; the items kept then block the lock for the " +
		"rest of their TTL, and it takes several in a row to outlast three TTLs: 0 of 100,000 seeds. " +
		"TestBareMajorityUnderLossFlagsFencedSurvivors holds it: in its world it starves in 3 of 100 seeds (first at seed 32)",
}

// minKillRate is the share of the mutants that are not equivalent that the
// default sweep must flag within mutantBudget seeds. It was 0.9 until
// corrected retried timed-out writes and fenced caught up in one call: the
// two survivors are mistakes that erode a margin under loss, which now
// starve waiters in 1 to 5 of 30,000 seeds (knownSurvivors), beyond the
// budget. It was 0.85, 13 of 15, until fenced~catch-up-skipped joined as
// a third survivor (knownSurvivors says why): 13 of 16, the same 13. Since
// fenced's tokens took the holder's clock it was 12 of 15, 0.8:
// fenced~token-no-tie-break survives the budget (knownSurvivors), and
// fenced~catch-up-skipped is equivalent inside fenced's envelope (Mutants).
// It is 0.75 since fenced's mutants cover every step of its token draw:
// 14 of 18, the same 12 and fenced~token-no-clock and
// fenced~tie-bits-on-top (flagged at seeds 31 and 1), with
// fenced~failed-draw-kept a fourth survivor (knownSurvivors); the five
// other new ones are equivalent (Mutants).
const minKillRate = 0.75

// mutantBudget is the seeds each mutant is swept over: twice the CLI's
// default sweep. Since each seed draws its world as well as its faults, a
// narrow edge is reached less often than in a fixed world:
// corrected~validity-from-grant is first flagged at seed 1,103 (39 of
// 30,000 seeds), where the fixed world flagged it within 1,000.
const mutantBudget = 2 * explore.DefaultSweepSeeds

// sweepTarget is the default sweep of v: every fault class, inside its
// envelope, each seed drawing its world.
func sweepTarget(v variants.Mutant) explore.Target { return explore.DefaultTarget(v.Variant) }

// stopOn is what counts as flagging a mutant of base: any bug, but for
// redlock only a safety one, since the design redlock follows starves
// waiters now and then (knownLiveness in sim/explore's expectations: 6 of
// 10,000 seeds). fenced counted only safety too while it starved waiters
// after wiped restarts (about 1 seed in 200), and then while the judge
// counted a slow link's late round trips and the plan's extra latency
// apart (its mutants starved at seed 531, where half a host's round trips
// came back late and the judge counted a tenth). Both are fixed: fenced
// counts any bug.
func stopOn(base string) explore.StopPolicy {
	if base == "redlock" {
		return explore.StopOnSafety
	}
	return explore.StopOnAny
}

// firstKill is the first seed, within budget, whose run shows a bug of the
// mutant (0: none), and how many seeds ran.
func firstKill(tb testing.TB, m variants.Mutant, budget int) uint64 {
	res, err := explore.Sweep(sweepTarget(m), explore.SweepOptions{From: 1, Count: budget, Run: explore.DefaultOptions(), StopOn: stopOn(m.Base)})
	if err != nil {
		tb.Fatal(err)
	}
	if f, ok := firstStop(res, m.Base); ok {
		return f.Seed
	}
	return 0
}

// firstStop is the first failure of res that counts for base (stopOn).
func firstStop(res explore.SweepResult, base string) (explore.Outcome, bool) {
	for _, f := range res.Failures {
		if stopOn(base) == explore.StopOnAny || !f.OnlyLiveness() {
			return f, true
		}
	}
	return explore.Outcome{}, false
}

func TestDefaultSweepFlagsEveryMutant(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps every mutant at the mutation budget")
	}
	budget := mutantBudget
	mutants := variants.Mutants()
	bases := map[string]bool{}
	for _, m := range mutants {
		bases[m.Base] = true
	}
	for _, name := range []string{"corrected", "fenced", "redlock"} {
		if !bases[name] {
			t.Errorf("no mutant of %s", name)
		}
		v, err := variants.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := explore.Sweep(explore.DefaultTarget(v), explore.SweepOptions{From: 1, Count: budget, StopOn: stopOn(name)})
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := firstStop(res, name); ok {
			t.Fatalf("the unmutated %s is not clean on the mutants' seeds: seed %d: %s", name, f.Seed, f.Findings[0].Story)
		}
	}
	killed, counted := 0, 0
	for _, m := range mutants {
		seed := firstKill(t, m, budget)
		reason, survives := knownSurvivors[m.Name]
		switch {
		case m.Equivalent != "":
			if seed != 0 {
				t.Errorf("%s is listed as equivalent (%s), but seed %d flags it", m.Name, m.Equivalent, seed)
			}
			t.Logf("%-32s equivalent: %s", m.Name, m.Equivalent)
			continue
		case seed != 0:
			killed++
			if survives {
				t.Errorf("%s is flagged at seed %d: take it off knownSurvivors", m.Name, seed)
			}
			t.Logf("%-32s flagged at seed %d (%s)", m.Name, seed, m.Mistake)
		case survives:
			t.Logf("%-32s not flagged in %d seeds, as known: %s", m.Name, budget, reason)
		default:
			t.Errorf("%s (%s) is not flagged in %d seeds: a finding about the generators; make them reach that edge",
				m.Name, m.Mistake, budget)
		}
		counted++
	}
	rate := float64(killed) / float64(counted)
	t.Logf("kill rate at the mutation budget (%d seeds): %d of %d, %.0f%%", budget, killed, counted, 100*rate)
	if rate < minKillRate {
		t.Errorf("kill rate %.0f%% is under %.0f%%", 100*rate, 100*minKillRate)
	}
}

var mutantSeeds = flag.Int("mutants.seeds", 0, "seeds BenchmarkMutants sweeps per mutant (0: the default sweep's budget)")

// BenchmarkMutants sweeps every mutant, keeping going, and reports per
// mutant the seed of its first kill (0: none) and the share of seeds that
// flag it; and over all of them the kill rate at the default budget.
//
//	go test ./variants -run '^$' -bench Mutants -benchtime 1x [-mutants.seeds 5000]
func BenchmarkMutants(b *testing.B) {
	budget := *mutantSeeds
	if budget == 0 {
		budget = explore.DefaultSweepSeeds
	}
	killed, counted := 0, 0
	for _, m := range variants.Mutants() {
		b.Run(m.Name, func(b *testing.B) {
			var first uint64
			var failed int
			for range b.N {
				res, err := explore.Sweep(sweepTarget(m), explore.SweepOptions{From: 1, Count: budget, KeepGoing: true, KeepFailures: 1})
				if err != nil {
					b.Fatal(err)
				}
				first, failed = 0, res.Failed
				if len(res.Failures) > 0 {
					first = res.Failures[0].Seed
				}
			}
			b.ReportMetric(float64(first), "first-kill-seed")
			b.ReportMetric(float64(failed)/float64(budget), "kills/seed")
			if m.Equivalent == "" {
				counted++
				if first != 0 && first <= uint64(explore.DefaultSweepSeeds) {
					killed++
				}
			}
		})
	}
	b.Run("kill-rate", func(b *testing.B) {
		// The mutants flagged within the default budget, of those that can be.
		b.ReportMetric(100*float64(killed)/float64(max(1, counted)), "kill-rate-%")
	})
}

// mutantNamed is the mutant of that name.
func mutantNamed(t *testing.T, name string) variants.Mutant {
	t.Helper()
	for _, m := range variants.Mutants() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no mutant %s", name)
	return variants.Mutant{}
}

// fenced's survivors that starve waiters (knownSurvivors) do so at a bare
// majority under loss: three of five replicas up for the whole run, 10% of
// messages lost (fenced's bound), the sweep's shortest TTL, 5 s, and
// twelve clients contending. That world is inside fenced's envelope, and
// fenced stays live there; the mutants do not. The default sweep draws its
// parts together too rarely to meet it within the budget.
func TestBareMajorityUnderLossFlagsFencedSurvivors(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps a contended world for fenced and two mutants")
	}
	cfg := sim.DefaultConfig()
	cfg.Nodes, cfg.Replication, cfg.Hosts, cfg.ThreadsPerHost = 5, 5, 4, 3
	cfg.TTL = 5 * time.Second
	cfg.HoldMin, cfg.HoldMax = time.Millisecond, 100*time.Millisecond
	cfg.ThinkMin, cfg.ThinkMax = 0, 50*time.Millisecond
	plan := faults.Plan{Network: faults.Network{LossPPM: 100_000}, Events: []faults.Event{
		{Kind: faults.Crash, Node: 3, At: time.Millisecond},
		{Kind: faults.Crash, Node: 4, At: time.Millisecond},
	}}
	sweep := func(v algorithm.Variant, stop bool) explore.SweepResult {
		res, err := explore.Sweep(explore.Target{Variant: v, Config: cfg, Plan: &plan},
			explore.SweepOptions{From: 1, Count: 40, KeepGoing: !stop, StopOn: explore.StopOnAny})
		if err != nil {
			t.Fatal(err)
		}
		if res.Inside != res.Runs {
			t.Fatalf("%s: %d of %d seeds broke an assumption of fenced's envelope", v.Name, res.Runs-res.Inside, res.Runs)
		}
		return res
	}
	fenced, err := variants.Lookup("fenced")
	if err != nil {
		t.Fatal(err)
	}
	if res := sweep(fenced, false); res.Failed > 0 {
		t.Fatalf("fenced starves in %d of %d seeds: seed %d: %s", res.Failed, res.Runs, res.Failures[0].Seed, res.Failures[0].Findings[0].Story)
	}
	for _, name := range []string{"fenced~catch-up-impatient", "fenced~failed-draw-kept"} {
		res := sweep(mutantNamed(t, name).Variant, true)
		if len(res.Failures) == 0 {
			t.Errorf("%s is not flagged in %d seeds of a bare majority under loss", name, res.Runs)
			continue
		}
		t.Logf("%s: flagged at seed %d: %s", name, res.Failures[0].Seed, res.Failures[0].Findings[0].Story)
	}
}

// The mistakes in choosing a token's high part that fenced's clocks make up
// for inside its envelope (Mutants: equivalent) starve holders where the
// clocks add nothing: TestRefusedHoldersFlagFencedWithoutCatchUp's world,
// whose hosts' clocks read an hour before the epoch while its three nodes
// are down in turn. fenced stays live there (that test).
func TestHighPartMistakesStarveWhereClocksDoNotMakeUp(t *testing.T) {
	cfg, plan := clocksAddNothing()
	for _, name := range []string{"fenced~token-last-reply", "fenced~token-least-reply", "fenced~raise-as-is"} {
		o, err := explore.RunPlan(explore.Target{Variant: mutantNamed(t, name).Variant, Config: cfg}, 1, plan, explore.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(o.Findings, func(f explore.Finding) bool {
			return f.Kind.IsLiveness() && strings.Contains(f.Story, "holders the resource refused")
		}) {
			t.Errorf("%s: no holders the resource refused are reported: %v", name, o.Findings)
		}
	}
}
