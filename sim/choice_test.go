package sim

import (
	"reflect"
	"testing"
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

func (d *deferring) Between(c Choice, lo, hi int64) int64 { d.check(c); return d.seed.Between(c, lo, hi) }
func (d *deferring) Chance(c Choice, ppm uint32) bool     { d.check(c); return d.seed.Chance(c, ppm) }

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
