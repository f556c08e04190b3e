package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// deferring is a Chooser that lets the seed decide every choice point and
// counts the points it saw, by kind.
type deferring struct {
	seed Chooser
	seen map[ChoiceKind]int
	all  []Choice
}

func (d *deferring) check(c Choice) {
	d.seen[c.Kind]++
	d.all = append(d.all, c)
}

func (d *deferring) Between(c Choice, lo, hi int64) int64 {
	d.check(c)
	return d.seed.Between(c, lo, hi)
}
func (d *deferring) Chance(c Choice, ppm uint32) bool { d.check(c); return d.seed.Chance(c, ppm) }

// The seed's streams are one Chooser among others: a Chooser that defers
// every choice point to them runs every seed, with every fault kind in
// play, to the run without one, hash for hash; and it is asked at every
// kind of choice point, each naming a client and node that exist.
func TestSeedChooserIsTheDefault(t *testing.T) {
	seen := map[ChoiceKind]int{}
	for seed := uint64(1); seed <= uint64(determinismSeeds()); seed++ {
		s := swarmScenario(seed)
		want, err := Run(s)
		if err != nil {
			t.Fatal(err)
		}
		d := &deferring{seen: seen}
		s.Choices = func(seed Chooser) Chooser { d.seed = seed; return d }
		got, err := Run(s)
		if err != nil {
			t.Fatal(err)
		}
		if got.TraceHash != want.TraceHash || !reflect.DeepEqual(got.History, want.History) {
			t.Fatalf("seed %d: deferring to the seed's streams changed the run (hash %x, want %x)", seed, got.TraceHash, want.TraceHash)
		}
		for _, c := range d.all {
			if c.Kind == 0 || c.Client < -1 || c.Client >= len(got.History.Clients) || c.Node < -1 || c.Node >= s.Config.Nodes {
				t.Fatalf("seed %d: a choice point names no such client or node: %+v", seed, c)
			}
		}
	}
	for k := ChoiceLatency; k <= ChoiceHold; k++ {
		if seen[k] == 0 && k != ChoiceSlow { // the swarm world has no slow link
			t.Errorf("no %s choice point in %d seeds of every fault class", k, determinismSeeds())
		}
	}
}

// injecting crashes node 0 before the first call to it and pauses the
// first holder at its first fault point; it defers every choice point.
type injecting struct {
	seed            Chooser
	crashed, paused bool
}

func (in *injecting) Between(c Choice, lo, hi int64) int64 { return in.seed.Between(c, lo, hi) }
func (in *injecting) Chance(c Choice, ppm uint32) bool     { return in.seed.Chance(c, ppm) }
func (in *injecting) Inject(s Step) []faults.Event {
	switch {
	case s.Node == 0 && !in.crashed:
		in.crashed = true
		return []faults.Event{{Kind: faults.Crash, Node: 0, For: time.Second}}
	case s.Node < 0 && s.Holding && !in.paused:
		in.paused = true
		return []faults.Event{{Kind: faults.Pause, Client: s.Client, For: 3 * time.Second}}
	}
	return nil
}

// An Injector's faults start at the step they are injected at: a crash is
// reported in Result.Injected at its instant and the node refuses while
// down; a pause of the stepping client is one of History.Pauses, at its
// fault point; and the run is as deterministic as any other.
func TestInjectorStartsFaultsAtSteps(t *testing.T) {
	c := smallConfig()
	c.Acquisitions = 1
	run := func() Result {
		res, err := Run(Scenario{Config: c, Variant: ttlVariant, Seed: 3, Trace: true,
			Choices: func(seed Chooser) Chooser { return &injecting{seed: seed} }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	if len(res.Injected) != 1 || res.Injected[0].Kind != faults.Crash || res.Injected[0].Node != 0 {
		t.Fatalf("injected %+v, want the crash of n0", res.Injected)
	}
	refused := false
	for _, e := range res.Trace {
		at := int64(res.Injected[0].At)
		refused = refused || (strings.Contains(e.What, "n0 refuses") && e.Time >= at && e.Time < at+int64(time.Second))
	}
	if !refused {
		t.Error("n0 did not refuse the call it was crashed before")
	}
	if len(res.History.Pauses) != 1 || res.History.Pauses[0].For != int64(3*time.Second) || res.History.Pauses[0].Point != string(faults.AfterGrant) {
		t.Errorf("pauses %+v, want one of 3s after the grant", res.History.Pauses)
	}
	if res.History.Healed < res.History.Pauses[0].Time+res.History.Pauses[0].For {
		t.Errorf("healed at %d, before the injected pause ended", res.History.Healed)
	}
	if again := run(); again.TraceHash != res.TraceHash {
		t.Errorf("the same injections ran to hash %x, then %x", res.TraceHash, again.TraceHash)
	}
}

// stepping steps the first holder's host clock by delta at its first
// fault point; it defers every choice point.
type stepping struct {
	seed    Chooser
	delta   time.Duration
	stepped bool
	hosts   int
	client  int
}

func (s *stepping) Between(c Choice, lo, hi int64) int64 { return s.seed.Between(c, lo, hi) }
func (s *stepping) Chance(c Choice, ppm uint32) bool     { return s.seed.Chance(c, ppm) }
func (s *stepping) Inject(st Step) []faults.Event {
	if st.Node >= 0 || !st.Holding || s.stepped {
		return nil
	}
	s.stepped, s.client = true, st.Client
	return []faults.Event{{Kind: faults.ClockJump, Target: faults.HostProcess, Index: st.Client / s.hosts, Delta: s.delta}}
}

// A host clock stepped mid-run moves its holder's validity with it, and
// the history says so: a step forward ends the belief that much sooner, a
// step back that much later, and the grant's true validity in the history
// is what the same jump in the plan would have made it.
func TestInjectedHostStepMovesValidity(t *testing.T) {
	c := smallConfig()
	c.Acquisitions = 1
	run := func(delta time.Duration, plan faults.Plan) (Result, int) {
		st := &stepping{delta: delta, hosts: c.ThreadsPerHost}
		sc := Scenario{Config: c, Variant: ttlVariant, Seed: 3, Plan: plan}
		if delta != 0 {
			sc.Choices = func(seed Chooser) Chooser { st.seed = seed; return st }
		}
		res, err := Run(sc)
		if err != nil {
			t.Fatal(err)
		}
		return res, st.client
	}
	grantOf := func(h model.History, client int) (valid, ended int64) {
		for _, e := range h.Events {
			switch {
			case e.Client != client:
			case e.Kind == model.AcquireReturn && e.Granted && valid == 0:
				valid = e.ValidUntilTrue
			case e.Kind == model.BeliefEnd && ended == 0:
				ended = e.Time
			}
		}
		return valid, ended
	}
	for _, delta := range []time.Duration{ttlLockTTL / 2, -ttlLockTTL / 2} {
		res, client := run(delta, faults.Plan{})
		if len(res.Injected) != 1 || res.Injected[0].Target != faults.HostProcess {
			t.Fatalf("injected %+v, want one host step", res.Injected)
		}
		valid, ended := grantOf(res.History, client)
		// The same jump, planned at the instant it was injected.
		planned, _ := run(0, faults.Plan{Events: []faults.Event{res.Injected[0]}})
		want, _ := grantOf(planned.History, client)
		if valid != want || valid == 0 {
			t.Errorf("step %s: the grant's validity ends at %d, and at %d with the jump planned", delta, valid, want)
		}
		unstepped, _ := run(0, faults.Plan{})
		before, _ := grantOf(unstepped.History, client)
		if got := before - valid; got != int64(delta) {
			t.Errorf("step %s moved the validity by %s", delta, time.Duration(got))
		}
		if delta > 0 && ended != valid {
			t.Errorf("step %s: the belief ended at %d, not when the validity did (%d)", delta, ended, valid)
		}
	}
}
