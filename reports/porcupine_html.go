package reports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// Annotation colours: faults in amber, violations in red.
const (
	faultColour     = "#ffe3b3"
	violationColour = "#ffb3b3"
)

// PorcupineHTML writes porcupine's interactive visualisation of the history
// against the "mutex" model (acquires and belief ends) or the "counter"
// model (the protected resource's accesses). Every timed fault of the plan
// is an annotation spanning the time it acts, on a row of its own per target,
// and the violation the model's checker finds for that model, if any, is a
// red annotation at its time. Porcupine orders operations by Seq, so each
// true time is placed at the Seq of the history event nearest to it.
//
// Porcupine runs without a timeout (a timeout would be wall-clock time). Its
// HTML is not byte-stable: never compare it with a golden file.
func PorcupineHTML(w io.Writer, h model.History, plan faults.Plan, which string) error {
	return PorcupinePage(w, h, plan, which, PageInfo{})
}

// PageInfo is what a porcupine page says of itself above the diagram: what
// ran, what broke, how to replay it, and where it was linked from.
type PageInfo struct {
	Variant   string
	Seed      uint64
	Violation string // the first violation, in words
	Replay    string // the command that replays the run
	Back      string // a link back, e.g. to the matrix (relative)
	// BackTo names what Back leads to: "the timeline" (the run's timeline
	// page, where a porcupine page that cannot show the violation points
	// to) or, when empty, the matrix.
	BackTo    string
	Porcupine string // a link to the porcupine page of the same run (relative)
	// Requests, for a run of unmodified code, is its trace
	// (TimelineOptions.Requests): the timeline page then shows, under its
	// chart, what each node was asked and answered around the first
	// violation, beside the clients' own lines.
	Requests []model.TraceEvent
}

// PorcupineModelFor is the porcupine model that shows a verdict's first
// safety violation: "counter" for a lost update without two holders,
// else "mutex".
func PorcupineModelFor(v model.Verdict) string {
	if _, ok := v.First(model.MutualExclusion); !ok {
		if _, ok := v.First(model.LostUpdate); ok {
			return "counter"
		}
	}
	return "mutex"
}

// PorcupinePage is PorcupineHTML with the page titled by info and a header
// that says it, so a page saved or shared on its own still tells what it
// shows. Around porcupine's output (whose markup it does not change) the
// page puts porcupine's legend below the header rather than over it, names
// each client's row by the client, scrolls the diagram to the violation,
// and, when the first violation is one linearizability cannot show (a
// liveness failure: nothing illegal happened, something failed to happen in
// time), says so above the diagram and points to the timeline.
func PorcupinePage(w io.Writer, h model.History, plan faults.Plan, which string, info PageInfo) error {
	var b strings.Builder
	shown, err := visualize(&b, h, plan, which)
	if err != nil {
		return err
	}
	page := b.String()
	if info.Variant != "" || info.Seed != 0 || info.Violation != "" || info.Replay != "" || info.Back != "" || info.BackTo != "" || info.Porcupine != "" {
		page = setPorcupineTitle(page, porcupineTitle(info))
		page = porcupineInsert(page, "<body>", porcupineHeader(info, shown))
	}
	page = porcupineInsert(page, "</style>", "\n<style>"+porcupineStyle+"</style>")
	script, err := porcupineScript(h)
	if err != nil {
		return err
	}
	if i := strings.LastIndex(page, "</body>"); i >= 0 {
		page = page[:i] + script + page[i:]
	} else {
		page += script
	}
	_, err = io.WriteString(w, page)
	return err
}

// visualize writes porcupine's page of the history against the model, and
// whether it marks a violation.
func visualize(w io.Writer, h model.History, plan faults.Plan, which string) (shown bool, err error) {
	var (
		m   porcupine.Model
		ops []porcupine.Operation
	)
	switch which {
	case "mutex":
		// Without denials (see model.MutexCheckOperations): the page shows
		// grants and belief ends, and renders on many clients.
		m, ops = model.MutexCheckOperations(h)
	case "counter":
		m, ops = model.CounterOperations(h)
	default:
		return false, fmt.Errorf("porcupine HTML: unknown model %q (want \"mutex\" or \"counter\")", which)
	}
	result, info := porcupine.CheckOperationsVerbose(m, ops, 0)
	annotations := faultAnnotations(h, plan)
	v, shown := modelViolation(h, which, result)
	if shown {
		annotations = append(annotations, violationAnnotation(h, v))
	}
	info.AddAnnotations(annotations)
	return shown, porcupine.Visualize(m, info, w)
}

// modelViolation is the violation the visualised model shows: the sweep's
// first overlap for the mutex, the counter checker's story when porcupine
// found the counter's accesses illegal.
func modelViolation(h model.History, which string, result porcupine.CheckResult) (model.Violation, bool) {
	if which == "mutex" {
		return model.FirstOverlap(h)
	}
	if result != porcupine.Illegal {
		return model.Violation{}, false
	}
	return model.CheckCounter(h)
}

// faultAnnotations turns every timed fault into an annotation from its
// start to its end (a point for jumps and topology changes).
func faultAnnotations(h model.History, plan faults.Plan) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, f := range plan.Events {
		start, end := int64(f.At), int64(f.At+f.For)
		switch {
		case f.Kind == faults.Crash && f.For <= 0:
			end = h.End // never restarts
		case f.Kind == faults.ClockJump || f.Kind == faults.Topology:
			end = start
		}
		details := "at " + strings.TrimSpace(formatTime(start))
		if end > start {
			details += " until " + strings.TrimSpace(formatTime(end))
		}
		out = append(out, porcupine.Annotation{
			Tag:             "fault " + faultTarget(h, f),
			Start:           nearestSeq(h, start),
			End:             nearestSeq(h, end),
			Description:     faultStart(h, f),
			Details:         details + " (true time)",
			BackgroundColor: faultColour,
		})
	}
	return out
}

// faultTarget names what a fault acts on, so that faults on one target share
// a row and faults on different targets never overlap.
func faultTarget(h model.History, f faults.Event) string {
	switch f.Kind {
	case faults.Crash, faults.Clog:
		return processName(faults.NodeProcess, f.Node)
	case faults.Partition:
		return groupName(f.Nodes, f.Hosts)
	case faults.ClockJump:
		return "clocks"
	case faults.Pause:
		return clientName(h, f.Client)
	}
	return string(f.Kind)
}

// violationAnnotation marks a violation at its time.
func violationAnnotation(h model.History, v model.Violation) porcupine.Annotation {
	at := nearestSeq(h, v.Time)
	return porcupine.Annotation{
		Tag:             "violation",
		Start:           at,
		End:             at,
		Description:     string(v.Kind),
		Details:         strings.TrimSpace(formatTime(v.Time)) + ": " + violationText(h, v),
		BackgroundColor: violationColour,
	}
}

// nearestSeq places true time t among the history's events: the Seq of the
// event nearest in time (the later one on a tie, so that a fault at an
// event's time sits with it); before the first event the first Seq - 1,
// after the last one the last Seq + 1.
func nearestSeq(h model.History, t int64) int64 {
	ev := h.Events
	if len(ev) == 0 {
		return 0
	}
	i := sort.Search(len(ev), func(i int) bool { return ev[i].Time >= t })
	switch {
	case i == len(ev):
		return int64(ev[i-1].Seq) + 1
	case i == 0 && ev[0].Time > t:
		return int64(ev[0].Seq) - 1
	case i > 0 && t-ev[i-1].Time < ev[i].Time-t:
		return int64(ev[i-1].Seq)
	}
	return int64(ev[i].Seq)
}

// porcupineTitle is the page's title: what ran and what broke first.
func porcupineTitle(info PageInfo) string {
	title := fmt.Sprintf("locksim: %s, seed %d", info.Variant, info.Seed)
	if info.Violation != "" {
		title += ": " + info.Violation
	}
	return title
}

// setPorcupineTitle replaces porcupine's title, or adds one.
func setPorcupineTitle(page, title string) string {
	t := "<title>" + html.EscapeString(title) + "</title>"
	if old := "<title>Porcupine</title>"; strings.Contains(page, old) {
		return strings.Replace(page, old, t, 1)
	}
	return porcupineInsert(page, "<head>", t)
}

// porcupineInsert inserts s after the first mark in page, or at its start.
func porcupineInsert(page, mark, s string) string {
	if i := strings.Index(page, mark); i >= 0 {
		return page[:i+len(mark)] + s + page[i+len(mark):]
	}
	return s + page
}

// porcupineHeader says what the page shows: the run, its first violation (as
// the heading, its story below), what the diagram cannot show, the replay
// command and the way back.
func porcupineHeader(info PageInfo, shown bool) string {
	var b strings.Builder
	headline, story, _ := strings.Cut(info.Violation, ": ")
	b.WriteString("\n<header class=\"locksim-header\">\n<h1>")
	b.WriteString(html.EscapeString(fmt.Sprintf("locksim: %s, seed %d", info.Variant, info.Seed)))
	if headline != "" {
		b.WriteString(" <span class=\"locksim-headline\">— " + html.EscapeString(headline) + "</span>")
	}
	b.WriteString("</h1>\n")
	if story != "" {
		b.WriteString("<p class=\"locksim-story\">" + html.EscapeString(story) + "</p>\n")
	}
	if notice := porcupineNothingToShow(info, shown); notice != "" {
		b.WriteString("<div class=\"locksim-notice\" id=\"nothing-to-show\">" + notice + "</div>\n")
	}
	if info.Replay != "" {
		b.WriteString("<p>replay: <code>" + html.EscapeString(info.Replay) + "</code></p>\n")
	}
	if info.Back != "" {
		b.WriteString("<p><a href=\"" + html.EscapeString(info.Back) + "\">back to " + html.EscapeString(cmp.Or(info.BackTo, "the matrix")) + "</a></p>\n")
	}
	rows := "then one per fault target (amber)"
	if shown {
		rows += " and the violation (red)"
	}
	b.WriteString("<p class=\"locksim-how\">One row per client (its acquires and belief ends, or its accesses to the " +
		"resource), " + rows + ", in the order things happened; hover a box for its true time.</p>\n</header>\n")
	return b.String()
}

// porcupineNothingToShow says, as HTML, why the diagram does not show the
// run's first violation when linearizability cannot show it (a liveness
// failure, an abort), and where to look instead; "" when the diagram shows
// it, or the page names none. shown: the diagram marks a violation.
func porcupineNothingToShow(info PageInfo, shown bool) string {
	kind, _, _ := strings.Cut(info.Violation, " ")
	k := model.ViolationKind(kind)
	if info.Violation == "" || (shown && !k.IsLiveness()) {
		return ""
	}
	where := "The run's timeline shows it: replay the run with <code>-trace</code> to print it."
	switch {
	case info.BackTo == "the timeline" && info.Back != "":
		where = "The run's <a href=\"" + html.EscapeString(info.Back) + "\">timeline page</a> shows it, with " +
			"the holds, the waits and the faults around it."
	case info.Replay != "":
		where = "The run's timeline shows it: the replay command below prints the timeline around the violation " +
			"(add <code>-trace</code> for the whole run)."
	}
	if k.IsLiveness() {
		legal := "Every operation below is legal, so porcupine's diagram shows no violation."
		if shown {
			legal = "The violation marked in red below is a later one, of another kind."
		}
		return "<p><strong>Linearizability has nothing to show for a liveness failure.</strong> This run's first " +
			"violation is " + html.EscapeString(kind) + ": something failed to happen in time, not something that " +
			"happened out of order. " + legal + "</p>\n<p>" + where +
			" The diagram below is the run's acquires and faults, for reference.</p>"
	}
	return "<p><strong>This diagram does not show the run's first violation</strong> (" + html.EscapeString(kind) +
		"): porcupine checks only whether the operations linearize, and these do.</p>\n<p>" + where + "</p>"
}

// porcupineStyle overrides porcupine's layout: its legend in the flow below
// the header (fixed, it covered the heading), the diagram a scroll box of
// its own below them, so that scrolling it to the violation keeps the
// header in view.
const porcupineStyle = `
.locksim-header { font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; max-width: 75rem; }
.locksim-header h1 { font-size: 1.35rem; margin: .2rem 0 .3rem; }
.locksim-header p { margin: .3rem 0; }
.locksim-headline { color: #b3261e; }
.locksim-how { color: #5b6475; font-size: .85rem; }
.locksim-header code { font: 13px ui-monospace, Menlo, monospace; background: #f3f5f8; padding: .1rem .3rem; border-radius: 3px; }
.locksim-notice { border-left: 4px solid #d9822b; background: #fff4e0; padding: .2rem .9rem; margin: .5rem 0; }
#legend { position: static; display: inline-block; background: none; backdrop-filter: none; padding: 0; margin: .3rem 0 0; }
#canvas { margin-top: .2rem; overflow: auto; border-top: 1px solid #dde1e8; }
#canvas svg { overflow: visible; }
#canvas .violation rect.client-annotation-rect { stroke: #b3261e; stroke-width: 2; }
`

// porcupineScriptJS runs once porcupine has drawn its diagram: it names
// each client's row (porcupine numbers them by client index) and keeps the
// names in view, marks the violation's annotation with the class
// "violation", fits the diagram's box to the window below the header and
// scrolls the box to the violation.
const porcupineScriptJS = `
(function () {
  'use strict'
  const names = %s
  const canvas = document.querySelector('#canvas')
  const svg = canvas && canvas.querySelector('svg')
  if (!svg) {
    return
  }
  const labels = svg.querySelector('g') ? [...svg.querySelector('g').children].filter((e) => e.tagName === 'text') : []
  let left = 0
  for (const t of labels) {
    if (/^[0-9]+$/.test(t.textContent) && Number(t.textContent) < names.length) {
      t.textContent = names[Number(t.textContent)]
    }
    left = Math.min(left, t.getBBox().x)
  }
  const margin = left < 0 ? Math.ceil(4 - left) : 0
  svg.style.marginLeft = margin + 'px'
  // The names stay in view while the diagram scrolls sideways: a copy of
  // their column on top, moved with the scroll.
  const divider = svg.querySelector('g > line.divider')
  const column = document.createElementNS('http://www.w3.org/2000/svg', 'g')
  const back = document.createElementNS('http://www.w3.org/2000/svg', 'rect')
  const attrs = {x: -margin, y: 0, width: margin + (divider ? Number(divider.getAttribute('x1')) : 0),
    height: svg.getAttribute('height'), fill: '#fff'}
  for (const [k, v] of Object.entries(attrs)) {
    back.setAttribute(k, v)
  }
  column.append(back, ...labels.map((t) => t.cloneNode(true)),
    ...[...svg.querySelectorAll('g > line.divider')].map((l) => l.cloneNode(true)))
  svg.append(column)
  const stick = () => column.setAttribute('transform', 'translate(' + canvas.scrollLeft + ' 0)')
  canvas.addEventListener('scroll', stick)
  const fit = () => {
    canvas.style.maxHeight = Math.max(240, window.innerHeight - canvas.getBoundingClientRect().top - window.scrollY - 8) + 'px'
  }
  fit()
  window.addEventListener('resize', fit)
  const mark = [...svg.querySelectorAll('rect.client-annotation-rect')]
    .find((r) => (r.getAttribute('style') || '').includes('%s'))
  if (!mark) {
    return
  }
  mark.parentNode.classList.add('violation')
  const box = canvas.getBoundingClientRect()
  const at = mark.getBoundingClientRect()
  canvas.scrollLeft += at.left - box.left - Math.max(0, (box.width - at.width) / 2)
  if (at.bottom > box.bottom) {
    canvas.scrollTop += at.bottom - box.bottom + 8
  }
  stick()
})()
`

// porcupineScript is porcupineScriptJS for the history's clients, as a script element.
func porcupineScript(h model.History) (string, error) {
	maxClient := len(h.Clients) - 1
	for _, e := range h.Events {
		maxClient = max(maxClient, e.Client)
	}
	names := make([]string, maxClient+1)
	for i := range names {
		names[i] = clientName(h, i)
	}
	js, err := json.Marshal(names) // escapes <, > and &: safe inside a script element
	if err != nil {
		return "", err
	}
	return "<script>" + fmt.Sprintf(porcupineScriptJS, js, violationColour) + "</script>\n", nil
}
