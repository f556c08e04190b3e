package repro

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/seedrun"
)

// PorcupinePath is where WritePages puts the porcupine page of a run whose
// timeline page is at path: beside it, named after it.
func PorcupinePath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + "-porcupine.html"
}

// WritePages writes the pages of run o, each atomically: locksim's
// timeline page at path (reports.TimelinePage), and porcupine's view of
// the linearizability check beside it (PorcupinePath), the two linked to
// each other. model is porcupine's ("mutex" or "counter"; "": the one that
// shows the verdict's first violation). info.Back, if set, is the link
// back from the timeline page, relative to path's directory.
func WritePages(path string, o seedrun.Outcome, model string, info reports.PageInfo) error {
	if model == "" {
		model = reports.PorcupineModelFor(o.Verdict)
	}
	if info.Violation == "" && len(o.Verdict.Violations) > 0 {
		info.Violation = o.Verdict.Violations[0].String()
	}
	porcupine := PorcupinePath(path)
	timeline := info
	timeline.Porcupine = filepath.Base(porcupine)
	var b bytes.Buffer
	if err := reports.TimelinePage(&b, o.History, o.RanPlan(), o.Verdict, timeline); err != nil {
		return err
	}
	if err := seedrun.WriteFileAtomic(path, b.Bytes()); err != nil {
		return err
	}
	lin := info
	lin.Back, lin.BackTo = filepath.Base(path), "the timeline"
	b.Reset()
	if err := reports.PorcupinePage(&b, o.History, o.RanPlan(), model, lin); err != nil {
		return err
	}
	return seedrun.WriteFileAtomic(porcupine, b.Bytes())
}
