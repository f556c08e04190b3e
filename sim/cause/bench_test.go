package cause

import (
	"testing"
	"time"

	"github.com/locksim/locksim/sim/explore"
)

// BenchmarkAttribution attributes the failing seeds among the first 64 of
// the original's default sweep, one after another on one core: what
// attribution costs, in replays per failing seed and in seconds of one
// core per 1,000 failing seeds.
func BenchmarkAttribution(b *testing.B) {
	tg := explore.DefaultTarget(variant(b, "original"))
	var fails []explore.Outcome
	for seed := uint64(1); seed <= 64; seed++ {
		o, err := explore.RunSeed(tg, seed, explore.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		if o.Failed() {
			fails = append(fails, o)
		}
	}
	b.ResetTimer()
	replays, attributed := 0, 0
	start := time.Now()
	for b.Loop() {
		for _, o := range fails {
			a, err := Attribute(tg, o, Options{})
			if err != nil {
				b.Fatal(err)
			}
			replays += a.Replays
			attributed++
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(replays)/float64(attributed), "replays/seed")
	b.ReportMetric(elapsed.Seconds()*1000/float64(attributed), "s/1000seeds")
}
