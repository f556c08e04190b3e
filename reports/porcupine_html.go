package reports

import (
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
// shows.
func PorcupinePage(w io.Writer, h model.History, plan faults.Plan, which string, info PageInfo) error {
	if info == (PageInfo{}) {
		return visualize(w, h, plan, which)
	}
	var b strings.Builder
	if err := visualize(&b, h, plan, which); err != nil {
		return err
	}
	page := b.String()
	title := fmt.Sprintf("locksim: %s, seed %d", info.Variant, info.Seed)
	if info.Violation != "" {
		title += ": " + info.Violation
	}
	header := "<div style=\"font-family:sans-serif;margin:8px 0 16px\"><h2 style=\"margin:0\">" + html.EscapeString(title) + "</h2>"
	if info.Replay != "" {
		header += "<p>replay: <code>" + html.EscapeString(info.Replay) + "</code></p>"
	}
	if info.Back != "" {
		header += "<p><a href=\"" + html.EscapeString(info.Back) + "\">back to the matrix</a></p>"
	}
	header += "</div>"
	if t := "<title>Porcupine</title>"; strings.Contains(page, t) {
		page = strings.Replace(page, t, "<title>"+html.EscapeString(title)+"</title>", 1)
	} else {
		page = strings.Replace(page, "<head>", "<head><title>"+html.EscapeString(title)+"</title>", 1)
	}
	if i := strings.Index(page, "<body>"); i >= 0 {
		page = page[:i+len("<body>")] + header + page[i+len("<body>"):]
	} else {
		page = header + page
	}
	_, err := io.WriteString(w, page)
	return err
}

func visualize(w io.Writer, h model.History, plan faults.Plan, which string) error {
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
		return fmt.Errorf("porcupine HTML: unknown model %q (want \"mutex\" or \"counter\")", which)
	}
	result, info := porcupine.CheckOperationsVerbose(m, ops, 0)
	annotations := faultAnnotations(h, plan)
	if v, ok := modelViolation(h, which, result); ok {
		annotations = append(annotations, violationAnnotation(h, v))
	}
	info.AddAnnotations(annotations)
	return porcupine.Visualize(m, info, w)
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
