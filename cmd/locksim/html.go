package main

import (
	"io"

	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/explore"
)

// porcupineHTML renders o with porcupine's visualisation, the plan's faults
// as annotations; kind is "mutex" or "counter".
func porcupineHTML(w io.Writer, o explore.Outcome, kind string) error {
	return reports.PorcupineHTML(w, o.History, o.Plan, kind)
}
