package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
)

// Around the first violation, timelines show this much true time either
// side, at most timelineMaxLines lines; -trace shows the whole run.
const (
	timelineAround   = 2 * time.Second
	timelineMaxLines = 50
)

// printPlan names the faults a run's plan contains, and an explored
// schedule's deviations.
func printPlan(w io.Writer, o explore.Outcome) {
	if o.Schedule != nil {
		fmt.Fprintf(w, "schedule: %s: %s\n", reports.Plural(o.Schedule.Faults(), "fault"), o.Schedule)
	}
	fs := o.Plan.Faults()
	if len(fs) == 0 && o.Schedule != nil {
		return // the schedule's faults are all there is
	}
	if len(fs) == 0 {
		fmt.Fprintf(w, "plan:    no faults\n")
		return
	}
	fmt.Fprintf(w, "plan:    %s (size %d)\n", strings.Join(fs, ", "), o.Plan.Size())
}

// printOutcome writes a run's verdict, each violation judged against the
// variant's envelope (a bug, expected, or not promised), and the metrics.
func printOutcome(w io.Writer, o explore.Outcome, variant string) {
	switch {
	case o.Verdict.OK():
		fmt.Fprintf(w, "verdict: ok, no violation\n")
	case o.Bugs() > 0:
		fmt.Fprintf(w, "verdict: VIOLATION, a bug of %s: a property it promises broke inside its envelope\n", variant)
	case o.Expected():
		fmt.Fprintf(w, "verdict: expected: promised properties broke only after the run broke an assumption (a failure with -strict)\n")
	default:
		fmt.Fprintf(w, "verdict: ok for what %s promises (a failure with -strict)\n", variant)
	}
	for _, x := range o.Findings {
		fmt.Fprintf(w, "  %s\n", x.Violation)
		if stuck := o.Stuck(x); stuck != "" {
			fmt.Fprintf(w, "    why nobody got it: %s\n", stuck)
		}
		if note := x.Note(variant); note != "" {
			fmt.Fprintf(w, "    %s\n", note)
		}
	}
	printLater(w, o.Verdict.Later)
	printMetrics(w, o.Verdict.Metrics)
}

// laterShown is how many of a run's later violations a verdict prints.
const laterShown = 8

// printLater writes the first laterShown of a run's violations after the
// first of each kind.
func printLater(w io.Writer, later []model.Violation) {
	if len(later) == 0 {
		return
	}
	fmt.Fprintf(w, "  then %s:\n", reports.Plural(len(later), "more violation"))
	for i, x := range later {
		if i == laterShown {
			fmt.Fprintf(w, "    … %d more (-json lists every one)\n", len(later)-laterShown)
			break
		}
		fmt.Fprintf(w, "    %s\n", x)
	}
}

// printVerdict writes a verdict as recorded (without its standing), one
// violation a line, and the key metrics.
func printVerdict(w io.Writer, v model.Verdict) {
	if v.OK() {
		fmt.Fprintf(w, "verdict: ok, no violation\n")
	} else {
		fmt.Fprintf(w, "verdict: VIOLATION\n")
		for _, x := range v.Violations {
			fmt.Fprintf(w, "  %s at %s: %s\n", x.Kind, model.Seconds(x.Time), x.Story)
		}
	}
	printMetrics(w, v.Metrics)
}

func printMetrics(w io.Writer, m model.Metrics) {
	fmt.Fprintf(w, "metrics: %d grants, %d failed attempts, acquire p50 %s p99 %s, availability %.1f%%, %.1f messages/grant, longest without holder %s, lock items left %d\n",
		m.Grants, m.FailedAttempts, approx(m.AcquireP50), approx(m.AcquireP99),
		100*m.Availability, m.MessagesPerGrant, approx(m.LongestNoHolderNS), m.Leftovers)
}

// printTimeline writes the run's timeline: around the first violation, or
// all of it when full (or when there is no violation to center on).
func printTimeline(w io.Writer, o explore.Outcome, full bool) error {
	opt := reports.TimelineOptions{}
	switch {
	case full:
		fmt.Fprintf(w, "\ntimeline:\n")
	case !o.Verdict.OK():
		fmt.Fprintf(w, "\ntimeline around the first violation (-trace shows all of it):\n")
		opt = reports.TimelineOptions{Around: timelineAround, MaxLines: timelineMaxLines}
	default:
		return nil
	}
	if len(o.History.Clients) == 0 {
		fmt.Fprintf(w, "  (none: the run did not finish in its worker process)\n\n")
		return nil
	}
	if err := reports.Timeline(w, o.History, o.RanPlan(), o.Verdict, opt); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// writeJSON writes x as indented JSON and a newline.
func writeJSON(w io.Writer, x any) error {
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// approx rounds a metric in ns for reading: 0.1 ms below a second, 1 ms above.
func approx(ns int64) string {
	d := time.Duration(ns)
	if d < time.Second {
		return envelope.Span(d.Round(100 * time.Microsecond))
	}
	return envelope.Span(d.Round(time.Millisecond))
}

// orEmpty is xs, or an empty slice for nil, so JSON says [] rather than null.
func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
