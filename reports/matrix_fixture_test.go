package reports

import (
	"fmt"

	"locksim/faults"
	"locksim/model"
)

// sampleMatrix is a small comparison written by hand: the original fails
// widely, a fenced variant overlaps beliefs but keeps the resource safe, a
// lease variant only starves waiters under partitions.
func sampleMatrix() Matrix {
	classes := []faults.Class{faults.ClassNone, faults.ClassLoss, faults.ClassPartition, faults.ClassPause}
	m := Matrix{Seeds: 200, Classes: classes}
	type outcome struct {
		fails int
		kinds []model.ViolationKind
	}
	add := func(variant, summary, assumes string, metrics VariantMetrics, outcomes ...outcome) {
		row := Row{Variant: variant, Summary: summary, Assumptions: assumes, Metrics: metrics}
		for i, class := range classes {
			c := NewCell(class)
			o := outcomes[i]
			for seed := int64(0); seed < int64(m.Seeds); seed++ {
				var v model.Verdict
				// Failing seeds are spread out: every (200/fails)-th seed, from seed 2.
				if o.fails > 0 && seed >= 2 && (seed-2)%int64(m.Seeds/o.fails) == 0 && c.Violations < o.fails {
					for _, k := range o.kinds {
						v.Violations = append(v.Violations, model.Violation{Kind: k})
					}
				}
				c.Record(seed, v)
			}
			if c.FirstSeed >= 0 {
				c.MinimalSize = len(o.kinds)
				c.Replay = fmt.Sprintf("locksim replay -variant %s -class %s -seed %d", variant, class, c.FirstSeed)
				c.HTMLLink = fmt.Sprintf("porcupine/%s-%s-%d.html", variant, class, c.FirstSeed)
			}
			row.Cells = append(row.Cells, c)
		}
		m.Rows = append(m.Rows, row)
	}
	safe := outcome{}
	me, lu := model.MutualExclusion, model.LostUpdate
	add("original", "the seed's algorithm, verbatim", "",
		VariantMetrics{GrantsPerMinute: 41.5, AcquireP50ms: 12.25, AcquireP99ms: 180, Availability: 0.62, MessagesPerGrant: 9.5},
		outcome{4, []model.ViolationKind{me}}, outcome{12, []model.ViolationKind{me, lu}},
		outcome{40, []model.ViolationKind{me, lu}}, outcome{100, []model.ViolationKind{me, lu}})
	add("fenced", "fencing tokens from a node counter; the resource rejects stale ones", "the resource checks tokens",
		VariantMetrics{GrantsPerMinute: 39, AcquireP50ms: 14, AcquireP99ms: 210.5, Availability: 0.6, MessagesPerGrant: 12},
		safe, safe, outcome{10, []model.ViolationKind{me}}, outcome{50, []model.ViolationKind{me}})
	add("lease|quorum", "majority quorum with node-side TTL leases", "bounded clock drift",
		VariantMetrics{GrantsPerMinute: 30.25, AcquireP50ms: 20, AcquireP99ms: 400, Availability: 0.5, MessagesPerGrant: 18},
		safe, safe, outcome{5, []model.ViolationKind{model.Liveness}}, safe)
	return m
}
