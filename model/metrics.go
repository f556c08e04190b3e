package model

import (
	"math"
	"slices"

	"golang.org/x/exp/stats"
)

// ComputeMetrics summarises a run. Latency percentiles are over granted
// attempts, call to return in true time; availability is the share of
// [0, End] covered by at least one hold.
func ComputeMetrics(h History) Metrics {
	c := new(Checker)
	byTime := holdsByStartTime(nil, Holds(h))
	attempts := Attempts(h)
	return c.computeMetrics(h, attempts, byTime, c.noHolderWindows(h, attempts, byTime))
}

// computeMetrics is ComputeMetrics over what Check already derived.
func (c *Checker) computeMetrics(h History, attempts []Attempt, byTime []Hold, windows []NoHolderWindow) Metrics {
	m := Metrics{Leftovers: len(h.Leftovers), LongestNoHolderNS: longestNoHolder(windows)}
	latencies := c.latencies[:0]
	for _, a := range attempts {
		switch a.Outcome {
		case Granted:
			m.Grants++
			latencies = append(latencies, float64(a.ReturnTime-a.CallTime))
		case Denied:
			m.FailedAttempts++
		}
	}
	c.latencies = latencies
	if len(latencies) > 0 {
		slices.Sort(latencies) // else Quantiles sorts a copy
		q := stats.Quantiles(latencies, 0.5, 0.99)
		m.AcquireP50, m.AcquireP99 = int64(math.Round(q[0])), int64(math.Round(q[1]))
		m.MessagesPerGrant = float64(h.Messages) / float64(m.Grants)
	}
	m.Availability = availability(h, byTime)
	return m
}

// availability is the fraction of [0, End] during which some client held
// the lock.
// holds are in start-time order.
func availability(h History, holds []Hold) float64 {
	if h.End <= 0 {
		return 0
	}
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
