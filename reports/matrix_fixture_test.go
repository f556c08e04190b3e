package reports

import (
	"fmt"
	"strconv"
	"strings"

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

// wideMatrix has the shape and the counts of the committed comparison
// (reports/VARIANTS.md: 13 variants × 13 fault classes, 12 assumptions),
// written as tokens: "133MUL" is 133 seeds with a bug of kinds M, U and L,
// "n/a" a class the envelope assumes away; a cost "44/179U" is 44 seeds
// with an expected U of 179 that broke the assumption, "-" not assumed.
// It is what the HTML page must stay readable with: many variants, long
// names, latencies from 17 ms to 12 s.
func wideMatrix() Matrix {
	classes := []faults.Class{"none", "loss", "ambiguous", "crash", "amnesia", "partition", "skew", "jump",
		"localtime", "pause", "threads", "topology", "all"}
	m := Matrix{Seeds: 200, Classes: classes, CostSeeds: 200, Assumptions: []string{"clock-error", "clock-rate",
		"clock-jumps", "use-within-validity", "fixed-topology", "durable-nodes", "restart-quarantine", "token-checks",
		"message-loss", "no-duplication", "replication-min", "reserved-lock-names"}}
	for _, r := range []struct {
		variant, cells, costs string
		metrics               VariantMetrics
	}{
		{"original", "0 39L 36L 133MUL 90MUL 133MUL 0 0 111MU 131MU 200MU 106MUL 190MUL", "193/200MUL - - - - - - - 90/200L - - -", VariantMetrics{31.0, 18.0, 255.1, 0.584, 32.2}},
		{"original-literal", "0 0 0 116MUL 91MUL 96MUL 0 0 56MU 118MU 200MU 111MUL 192MUL", "193/200MUL - - - - - - - 78/200L - - -", VariantMetrics{22.9, 18.3, 340.5, 0.474, 33.8}},
		{"fix-identity", "0 36L 18L 121MUL 88MUL 93MUL 0 0 120MUL 131MU 0 111MUL 166MUL", "188/200MUL - - - - - - - 158/200L - - -", VariantMetrics{19.2, 17.6, 226.6, 0.414, 46.2}},
		{"fix-clock", "0 2MUL 0 78MUL 75MUL 79MUL 0 0 0 135MU 200MU 70MU 178MUL", "- - - - - - - - 80/200L - - -", VariantMetrics{33.3, 18.6, 390.6, 0.635, 32.0}},
		{"fix-validity", "0 39L 36L 133MUL 90MUL 133MUL 0 0 111MU 1L 200MU 106MUL 188MUL", "194/200MUL - - 44/179U - - - - 92/200L - - -", VariantMetrics{31.3, 18.0, 268.1, 0.578, 32.2}},
		{"fix-quorum", "0 39L 36L 72L 12MUL 57L 0 0 111MU 131MU 200MU 71MUL 178MUL", "192/200MUL - - - - - - - 96/200L - - -", VariantMetrics{29.2, 17.9, 265.0, 0.567, 35.1}},
		{"fix-amnesia", "0 39L 36L 132MUL 89MUL 133MUL 0 0 111MU 131MU 200MU 106MUL 188MUL", "193/200MUL - - - - - 33/173MUL - 86/200L - - -", VariantMetrics{31.0, 18.0, 252.7, 0.580, 32.2}},
		{"fix-partial", "0 0 0 92MUL 74MUL 73MUL 0 0 115MU 131MU 200MU 97MUL 192MUL", "193/200MUL - - - - - - - 72/200L - - -", VariantMetrics{34.8, 18.2, 334.5, 0.654, 38.2}},
		{"corrected", "0 0 0 0 0 0 0 n/a 0 0 0 n/a 0", "- 17/200MU 16/200MUL 112/141U 22/114MU - 4/179MU - 41/200L - - 164/200L", VariantMetrics{33.9, 247.9, 5019.4, 0.685, 56.4}},
		{"fenced", "0 0 0 0 0 0 0 0 0 0 0 0 0", "0/200 0/0 3/200L - 0/103 - - 127/200U 76/200L - - 173/200L", VariantMetrics{33.2, 284.0, 5312.8, 0.683, 62.7}},
		{"etcd-fenced", "0 0 0 4L n/a 2L 0 n/a 0 2L 0 n/a 2L", "- 7/200L 10/200L - 9/119L 12/200UL - 40/200U 39/200L - - 9/200L", VariantMetrics{40.7, 914.5, 12013.0, 0.826, 118.3}},
		{"etcd-mutex", "0 0 0 4L n/a 2L 0 n/a 0 76MU 0 n/a 38MUL", "- 42/200MUL 36/200MUL - 24/119MUL 26/200MU - - 39/200L - - 40/200MUL", VariantMetrics{40.7, 914.4, 12007.7, 0.826, 118.3}},
		{"redlock", "0 0 0 0 0 0 0 n/a 0 0 0 n/a 0", "- 14/200MU 13/200MU 121/147U 15/122MU - 1/178M - 99/200L 0/200 0/200 183/200L", VariantMetrics{32.4, 21.4, 1486.8, 0.659, 104.1}},
	} {
		row := Row{Variant: r.variant, Summary: "variant " + r.variant, Envelope: "promises mutual exclusion", Metrics: r.metrics}
		for i, tok := range strings.Fields(r.cells) {
			row.Cells = append(row.Cells, wideCell(r.variant, classes[i], m.Seeds, tok))
		}
		for i, tok := range strings.Fields(r.costs) {
			row.Costs = append(row.Costs, wideCost(r.variant, m.Assumptions[i], tok))
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// wideKinds reads the kind letters of a wideMatrix token.
func wideKinds(letters string) []model.ViolationKind {
	var kinds []model.ViolationKind
	for _, l := range letters {
		kinds = append(kinds, map[rune]model.ViolationKind{'M': model.MutualExclusion, 'U': model.LostUpdate,
			'L': model.Liveness, 'A': model.Panic}[l])
	}
	return kinds
}

// wideCell is a cell of wideMatrix: its first fails seeds have a bug.
func wideCell(variant string, class faults.Class, seeds int, tok string) Cell {
	c := NewCell(class)
	if tok == "n/a" {
		c.Excluded = "it"
		tok = "0"
	}
	digits := strings.TrimRight(tok, "MULA")
	fails, _ := strconv.Atoi(digits)
	for seed := int64(1); seed <= int64(seeds); seed++ {
		var r Run
		if int(seed) <= fails {
			r.Bugs = wideKinds(tok[len(digits):])
		}
		c.Record(seed, r)
	}
	if c.FirstSeed >= 0 {
		c.MinimalSize = 1
		c.Replay = fmt.Sprintf("locksim replay -variant %s -class %s -seed %d", variant, class, c.FirstSeed)
		c.HTMLLink = fmt.Sprintf("cells/%s-%s-seed-%d.html", variant, class, c.FirstSeed)
	}
	return c
}

// wideCost is a cost of wideMatrix.
func wideCost(variant, assumption, tok string) Cost {
	if tok == "-" {
		return NewCost(assumption, false)
	}
	c := NewCost(assumption, true)
	expectedText, rest, _ := strings.Cut(tok, "/")
	brokeText := strings.TrimRight(rest, "MULA")
	letters := rest[len(brokeText):]
	expected, _ := strconv.Atoi(expectedText)
	broke, _ := strconv.Atoi(brokeText)
	for seed := int64(1); seed <= 200; seed++ {
		var r Run
		if int(seed) <= expected {
			r.Expected = wideKinds(letters)
		}
		c.Record(seed, r, int(seed) <= broke)
	}
	if c.FirstSeed >= 0 {
		c.Replay = fmt.Sprintf("locksim replay -variant %s -seed %d -beyond %s", variant, c.FirstSeed, assumption)
	}
	return c
}
