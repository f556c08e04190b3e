package reports

import (
	"fmt"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// sampleMatrix is a small comparison written by hand: the original fails
// widely, a fenced variant overlaps beliefs (which it does not promise
// against) but keeps the resource safe, a lease variant only starves
// waiters under partitions and assumes pauses away; and the cost of
// breaking two assumptions.
func sampleMatrix() Matrix {
	classes := []faults.Class{faults.ClassNone, faults.ClassLoss, faults.ClassPartition, faults.ClassPause}
	m := Matrix{Seeds: 200, Classes: classes, Assumptions: []string{"clock-rate", "token-checks"}, CostSeeds: 50}
	type outcome struct {
		fails      int
		kinds      []model.ViolationKind
		unpromised bool // the fails broke only what is not promised
	}
	add := func(variant, summary, envelope string, metrics VariantMetrics, outcomes ...outcome) *Row {
		row := Row{Variant: variant, Summary: summary, Envelope: envelope, Metrics: metrics}
		for i, class := range classes {
			c := NewCell(class)
			o := outcomes[i]
			marked := 0
			for seed := int64(0); seed < int64(m.Seeds); seed++ {
				var r Run
				// Failing seeds are spread out: every (200/fails)-th seed, from seed 2.
				if o.fails > 0 && seed >= 2 && (seed-2)%int64(m.Seeds/o.fails) == 0 && marked < o.fails {
					marked++
					if o.unpromised {
						r.Unpromised = true
					} else {
						r.Bugs = o.kinds
					}
				}
				r.Outside = seed == 7 && class == faults.ClassLoss
				c.Record(seed, r)
			}
			if c.FirstSeed >= 0 {
				c.MinimalSize = len(o.kinds)
				c.Replay = fmt.Sprintf("locksim replay -variant %s -class %s -seed %d", variant, class, c.FirstSeed)
				c.HTMLLink = fmt.Sprintf("porcupine/%s-%s-%d.html", variant, class, c.FirstSeed)
			}
			row.Cells = append(row.Cells, c)
		}
		m.Rows = append(m.Rows, row)
		return &m.Rows[len(m.Rows)-1]
	}
	safe := outcome{}
	me, lu := model.MutualExclusion, model.LostUpdate
	orig := add("original", "the seed's algorithm, verbatim", "",
		VariantMetrics{GrantsPerMinute: 41.5, AcquireP50ms: 12.25, AcquireP99ms: 180, Availability: 0.62, MessagesPerGrant: 9.5},
		outcome{4, []model.ViolationKind{me}, false}, outcome{12, []model.ViolationKind{me, lu}, false},
		outcome{40, []model.ViolationKind{me, lu}, false}, outcome{100, []model.ViolationKind{me, lu}, false})
	orig.Costs = []Cost{NewCost("clock-rate", false), NewCost("token-checks", false)}
	fenced := add("fenced", "fencing tokens from a node counter; the resource rejects stale ones", "promises resource safety; safe if the resource checks every fencing token",
		VariantMetrics{GrantsPerMinute: 39, AcquireP50ms: 14, AcquireP99ms: 210.5, Availability: 0.6, MessagesPerGrant: 12},
		safe, safe, outcome{10, []model.ViolationKind{me}, true}, outcome{50, []model.ViolationKind{me}, true})
	tokens := NewCost("token-checks", true)
	for seed := int64(1); seed <= int64(m.CostSeeds); seed++ {
		var r Run
		if seed%5 == 3 {
			r.Expected = []model.ViolationKind{lu}
		}
		tokens.Record(seed, r, seed%10 != 0)
	}
	tokens.Replay = "locksim replay -variant fenced -seed 3 -beyond token-checks"
	fenced.Costs = []Cost{NewCost("clock-rate", false), tokens}
	lease := add("lease|quorum", "majority quorum with node-side TTL leases", "promises mutual exclusion; safe if clock rates differ by at most 10000 ppm, no pause outlasts the validity",
		VariantMetrics{GrantsPerMinute: 30.25, AcquireP50ms: 20, AcquireP99ms: 400, Availability: 0.5, MessagesPerGrant: 18},
		safe, safe, outcome{5, []model.ViolationKind{model.Liveness}, false}, safe)
	lease.Cells[3].Excluded = "pauses"
	drift := NewCost("clock-rate", true)
	for seed := int64(1); seed <= int64(m.CostSeeds); seed++ {
		drift.Record(seed, Run{}, true)
	}
	lease.Costs = []Cost{drift, NewCost("token-checks", false)}
	return m
}
