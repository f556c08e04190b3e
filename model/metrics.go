package model

import (
	"cmp"
	"math"
	"slices"

	"golang.org/x/exp/stats"
)

// ComputeMetrics summarises a run. Latency percentiles are over granted
// attempts, call to return in true time; availability is the share of
// [0, End] covered by at least one hold.
func ComputeMetrics(h History) Metrics {
	m := Metrics{Leftovers: len(h.Leftovers), LongestNoHolderNS: LongestNoHolder(h)}
	var latencies []float64
	for _, a := range Attempts(h) {
		switch a.Outcome {
		case Granted:
			m.Grants++
			latencies = append(latencies, float64(a.ReturnTime-a.CallTime))
		case Denied:
			m.FailedAttempts++
		}
	}
	if len(latencies) > 0 {
		q := stats.Quantiles(latencies, 0.5, 0.99)
		m.AcquireP50, m.AcquireP99 = int64(math.Round(q[0])), int64(math.Round(q[1]))
		m.MessagesPerGrant = float64(h.Messages) / float64(m.Grants)
	}
	m.Availability = availability(h)
	return m
}

// availability is the fraction of [0, End] during which some client held
// the lock.
func availability(h History) float64 {
	if h.End <= 0 {
		return 0
	}
	holds := Holds(h)
	slices.SortStableFunc(holds, func(a, b Hold) int { return cmp.Compare(a.StartTime, b.StartTime) })
	held, covered := int64(0), int64(0) // covered: union measured up to here
	for _, hd := range holds {
		start, end := max(hd.StartTime, covered, 0), min(hd.EndTime, h.End)
		if end > start {
			held += end - start
		}
		covered = max(covered, end)
	}
	return float64(held) / float64(h.End)
}
