package reports

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// TimelineOptions narrows a timeline to what a reader needs.
type TimelineOptions struct {
	// Around, when > 0, keeps only the lines within Around of true time of
	// the first violation, and says how many lines were left out on either
	// side. 0 shows the whole run; so does a verdict without violations.
	Around time.Duration
	// MaxLines, when > 0, caps the number of lines shown: the first ones,
	// or with Around those centred on the first violation. Markers say how
	// many lines were left out.
	MaxLines int
	// Requests is the run's trace (seedrun.Options.Trace) when it ran
	// unmodified code (sim/realredis): each request a node applied, with
	// its reply, and each connection lost or reset, become lines of that
	// node, beside the client's own, so that a reader sees why the library
	// believed what it did. Nil: no such lines.
	Requests []model.TraceEvent
}

// Markers that start the "who" column of a line that is not a client's.
const (
	faultMarker     = "!!"
	violationMarker = "XX"
)

// Line ranks order lines that happen at the same true time: a fault acts
// before the events it may cause, a violation is reported after the events
// that make it.
const (
	rankFault = iota
	rankEvent
	rankViolation
)

// timelineLine is one line of a timeline before it is written.
type timelineLine struct {
	time  int64
	rank  int
	order int    // tie-break: Seq for events, position in plan or verdict otherwise
	who   string // client name, or a marker
	text  string
	// clients names the clients a node's line is about: whose lock item
	// it is, and whose request changed it.
	clients []string
}

// Timeline writes a run as text a person reads: one line per event that
// matters, in Seq order, with the plan's faults (marked "!!") and the
// verdict's violations (marked "XX") interleaved at their true times.
// Clients are named from h.Clients. The output is deterministic.
func Timeline(w io.Writer, h model.History, plan faults.Plan, v model.Verdict, opt TimelineOptions) error {
	lines := timelineLines(h, plan, v)
	if len(opt.Requests) > 0 {
		lines = append(lines, requestLines(h, v, opt.Requests)...)
		slices.SortStableFunc(lines, func(a, b timelineLine) int {
			return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.rank, b.rank), cmp.Compare(a.order, b.order))
		})
	}
	lo, hi := timelineWindow(lines, v, opt)
	keep := make([]bool, len(lines))
	for i := lo; i < hi; i++ {
		keep[i] = true
	}
	if lo > 0 || hi < len(lines) {
		keepWhatExplains(lines, h, v, keep)
	}
	width := whoWidth(lines)

	var b strings.Builder
	if steady := steadyFaults(plan); len(steady) > 0 {
		fmt.Fprintf(&b, "%s  %s steady: %s\n", formatTime(0), faultMarker, strings.Join(steady, ", "))
	}
	elided := 0
	for i, l := range lines {
		if !keep[i] {
			elided++
			continue
		}
		if elided > 0 {
			fmt.Fprintf(&b, "%9s  … %d lines elided\n", "", elided)
			elided = 0
		}
		who := l.who
		if l.rank == rankEvent {
			who += strings.Repeat(" ", max(0, width-len(who))) + " "
		}
		fmt.Fprintf(&b, "%s  %s %s\n", formatTime(l.time), who, l.text)
	}
	if elided > 0 {
		fmt.Fprintf(&b, "%9s  … %d lines elided\n", "", elided)
	}
	fmt.Fprintf(&b, "%s  -- %s\n", formatTime(h.End), runEnd(h))
	_, err := io.WriteString(w, b.String())
	return err
}

// timelineLines builds every line of the run, sorted.
func timelineLines(h model.History, plan faults.Plan, v model.Verdict) []timelineLine {
	var lines []timelineLine
	calledAt := map[int]int64{}   // client → time of its pending acquire call
	deadlines := map[int]string{} // client → the short deadline its pending acquire was called with
	own := grantValidity(h)
	for _, e := range h.Events {
		if e.Kind == model.AcquireCall {
			calledAt[e.Client] = e.Time
			if d, ok := strings.CutPrefix(e.Reason, "deadline "); ok {
				deadlines[e.Client] = d
			}
		}
		if v, ok := own[e.Seq]; ok {
			e.ValidUntilTrue = v // the grant's own validity, not the last extend's
		}
		text := eventText(e, calledAt)
		if d, ok := deadlines[e.Client]; ok && e.Kind == model.AcquireReturn {
			text += ", called with a deadline of " + d
			delete(deadlines, e.Client)
		}
		if text == "" {
			continue
		}
		lines = append(lines, timelineLine{time: e.Time, rank: rankEvent, order: int(e.Seq),
			who: clientName(h, e.Client), text: text})
	}
	// Only what happened before the run ended: a fault starting at the end
	// itself still fires (it was scheduled before the end), one ending then
	// does not.
	for i, f := range plan.Events {
		at := int64(f.At)
		if at > h.End {
			continue
		}
		lines = append(lines, timelineLine{time: at, rank: rankFault, order: 2 * i,
			who: faultMarker, text: faultStart(h, f)})
		if end, ok := faultEnd(h, f); ok && at+int64(f.For) < h.End {
			lines = append(lines, timelineLine{time: at + int64(f.For), rank: rankFault, order: 2*i + 1,
				who: faultMarker, text: end})
		}
	}
	// Each Extend call and what it answered.
	for i, x := range h.Extends {
		lines = append(lines, timelineLine{time: x.Time, rank: rankEvent, order: len(h.Events) + len(h.Moves) + len(h.Items) + i,
			who: clientName(h, x.Client), text: extendText(x), clients: []string{clientName(h, x.Client)}})
	}
	// The pauses taken at fault points, and the timed pauses that waited
	// for one, when they struck; each client resumes For later.
	for i, p := range h.Pauses {
		lines = append(lines, timelineLine{time: p.Time, rank: rankEvent, order: -len(h.Pauses) + i,
			who: clientName(h, p.Client), text: fmt.Sprintf("pauses %s at %s", formatDuration(time.Duration(p.For)), p.Point)})
	}
	// The topology changes that waited for a grant, when they struck.
	for i, mv := range h.Moves {
		if mv.Time > 0 && !plannedMoveAt(plan, mv.Time) {
			lines = append(lines, timelineLine{time: mv.Time, rank: rankEvent, order: len(h.Events) + i,
				who: faultMarker, text: "topology → " + nodeList(mv.Nodes)})
		}
	}
	lines = append(lines, itemLines(h)...)
	for i, x := range v.Violations {
		lines = append(lines, timelineLine{time: x.Time, rank: rankViolation, order: i,
			who: violationMarker, text: violationText(h, x)})
	}
	slices.SortStableFunc(lines, func(a, b timelineLine) int {
		return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.rank, b.rank), cmp.Compare(a.order, b.order))
	})
	return lines
}

// itemLines are the message deliveries that changed the lock's state on a
// node (History.Items, when the run recorded them): each lock item written,
// and how it went — removed by whose request and when that request was
// sent (a late duplicate shows), expired, lost with its node's data. The
// application's data has a line only when a client's request destroyed it.
func itemLines(h model.History) []timelineLine {
	var lines []timelineLine
	order := len(h.Events) + len(h.Moves)
	add := func(t int64, node, text string, clients ...string) {
		order++
		lines = append(lines, timelineLine{time: t, rank: rankEvent, order: order, who: node, text: text, clients: clients})
	}
	// A stay another thread's write rewrote: its end line says the write,
	// so the new stay needs no line of its own.
	type takeover struct {
		node   string
		at     int64
		client int
	}
	taken := map[takeover]bool{}
	for _, it := range h.Items {
		if it.How == "rewritten" && it.By != it.Client {
			taken[takeover{it.Node, it.To, it.By}] = true
		}
	}
	for _, it := range h.Items {
		by := ""
		if it.By >= 0 {
			by = clientName(h, it.By)
		}
		if it.App {
			if by != "" && (it.How == "removed" || it.How == "overwritten") {
				add(it.To, it.Node, fmt.Sprintf("the application's data under %q %s by %s's request sent at %s", it.Key, it.How, by, strings.TrimSpace(formatTime(it.Sent))), by)
			}
			continue
		}
		owner := clientName(h, it.Client)
		item := owner + "'s lock item" + ownerNote(h, it)
		if !taken[takeover{it.Node, it.From, it.Client}] {
			add(it.From, it.Node, item+" written", owner)
		}
		switch it.How {
		case "removed":
			add(it.To, it.Node, fmt.Sprintf("%s removed by %s's request sent at %s", item, by, strings.TrimSpace(formatTime(it.Sent))), owner, by)
		case "rewritten":
			if it.By != it.Client { // another thread of the same name took it over
				add(it.To, it.Node, fmt.Sprintf("%s rewritten by %s's write sent at %s", item, by, strings.TrimSpace(formatTime(it.Sent))), owner, by)
			}
		case "expired":
			add(it.To, it.Node, item+" expires", owner)
		case "wiped":
			add(it.To, it.Node, item+" lost with the node's data", owner)
		}
	}
	return lines
}

// ownerNote names the owner an item carries when the client's name does
// not say it: threads share their host's name, so one thread's request
// acts on another's item.
func ownerNote(h model.History, it model.ItemLife) string {
	if it.Client < 0 || it.Client >= len(h.Clients) {
		return ""
	}
	host := h.Clients[it.Client].Host
	shared := slices.ContainsFunc(h.Clients, func(c model.Client) bool { return c.Host == host && c.Name != h.Clients[it.Client].Name })
	if it.Owner != host || shared {
		return fmt.Sprintf(" (owner %q)", it.Owner)
	}
	return ""
}

// plannedMoveAt reports whether the plan moves the key at t itself (a
// change that did not wait: its line is the plan's).
func plannedMoveAt(plan faults.Plan, t int64) bool {
	for _, e := range plan.Events {
		if e.Kind == faults.Topology && e.Point == "" && int64(e.At) == t {
			return true
		}
	}
	return false
}

// eventText says what a history event means, or "" for events not worth a
// line (calls whose return line says it all).
func eventText(e model.Event, calledAt map[int]int64) string {
	switch e.Kind {
	case model.AcquireReturn:
		return acquireText(e, calledAt)
	case model.BeliefEnd:
		return "belief ends (" + e.Reason + ")"
	case model.ReleaseReturn:
		return "release returned"
	case model.ResourceRead:
		if !e.Accepted {
			return "read " + rejection(e)
		}
		return fmt.Sprintf("read %d", e.Value)
	case model.ResourceWrite:
		if !e.Accepted {
			return fmt.Sprintf("write %d %s", e.Value, rejection(e))
		}
		return fmt.Sprintf("write %d", e.Value)
	case model.ClientStop:
		if e.Reason != "" {
			return "client stops (" + e.Reason + "), open operation's outcome unknown"
		}
		return "client stops, open operation's outcome unknown"
	}
	return ""
}

// acquireText writes an acquire's outcome with what the client then knows.
func acquireText(e model.Event, calledAt map[int]int64) string {
	var details []string
	if e.Granted && e.HasToken {
		details = append(details, fmt.Sprintf("token %d", e.Token))
	}
	if e.Granted && e.ValidUntilTrue != 0 {
		details = append(details, "valid to "+strings.TrimSpace(formatTime(e.ValidUntilTrue)))
	}
	if at, ok := calledAt[e.Client]; ok {
		details = append(details, "took "+formatLatency(time.Duration(e.Time-at)))
		delete(calledAt, e.Client)
	}
	outcome := "denied"
	if e.Granted {
		outcome = "granted"
	}
	// A holder that stalled past its validity and then extended, trusting
	// the answer (the real-code workload's misuse), regains or not by it.
	verb := "acquire"
	if e.Reason == "extend" || strings.HasPrefix(e.Reason, "extend failed: ") {
		verb = "extend after its validity ended"
		if !e.Granted {
			details = append(details, strings.TrimPrefix(e.Reason, "extend failed: "))
		}
	}
	if len(details) == 0 {
		return verb + " → " + outcome
	}
	return verb + " → " + outcome + " (" + strings.Join(details, ", ") + ")"
}

// formatLatency rounds a latency to what a reader compares: ms, or µs below 1ms.
func formatLatency(d time.Duration) string {
	if d >= time.Millisecond {
		return formatDuration(d.Round(time.Millisecond))
	}
	return d.Round(time.Microsecond).String()
}

// rejection explains why fencing turned an access away.
func rejection(e model.Event) string {
	if e.HasToken {
		return fmt.Sprintf("(rejected: stale token %d)", e.Token)
	}
	return "(rejected: no token)"
}

// violationText writes a violation's kind, the clients involved and its story.
func violationText(h model.History, x model.Violation) string {
	names := make([]string, len(x.Clients))
	for i, c := range x.Clients {
		names[i] = clientName(h, c)
	}
	s := string(x.Kind)
	if len(names) > 0 {
		s += " [" + strings.Join(names, " ") + "]"
	}
	return s + ": " + x.Story
}

// runEnd sums up how the run ended.
func runEnd(h model.History) string {
	s := fmt.Sprintf("run ends: counter %d, %d messages", h.FinalValue, h.Messages)
	if n := len(h.Leftovers); n > 0 {
		items := make([]string, n)
		for i, l := range h.Leftovers {
			items[i] = l.Node + " held by " + l.Owner
		}
		s += fmt.Sprintf(", lock items left: %s", strings.Join(items, ", "))
	}
	if a := h.Abort; a != nil {
		detail, _, _ := strings.Cut(a.Detail, "\n")
		s += fmt.Sprintf(", aborted: %s by %s: %s", a.Kind, clientName(h, a.Client), detail)
	}
	return s
}

// timelineWindow applies the options: the lines shown are lines[lo:hi].
func timelineWindow(lines []timelineLine, v model.Verdict, opt TimelineOptions) (lo, hi int) {
	lo, hi = 0, len(lines)
	// centre is the line MaxLines keeps in view: the first, or with Around
	// the first violation's.
	centre := 0
	if opt.Around > 0 && len(v.Violations) > 0 {
		first := v.Violations[0].Time
		for _, x := range v.Violations[1:] {
			first = min(first, x.Time)
		}
		lo = index(lines, func(l timelineLine) bool { return l.time >= first-int64(opt.Around) })
		hi = index(lines, func(l timelineLine) bool { return l.time > first+int64(opt.Around) })
		centre = index(lines, func(l timelineLine) bool { return l.rank == rankViolation && l.time >= first })
	}
	if opt.MaxLines > 0 && hi-lo > opt.MaxLines {
		if centre > lo {
			lo = min(max(lo, centre-opt.MaxLines/2), hi-opt.MaxLines)
		}
		hi = lo + opt.MaxLines
	}
	return lo, hi
}

// keepWhatExplains marks, beyond the window, the lines a reader needs to
// see the first violation happen, however far back they are: for each
// client it involves, from its last grant before the violation on, every
// grant, end of belief, release, pause and stop, and every change to its
// lock items on the nodes; and every fault that started in that stretch. Denied attempts and resource accesses stay
// elided.
func keepWhatExplains(lines []timelineLine, h model.History, v model.Verdict, keep []bool) {
	if len(v.Violations) == 0 {
		return
	}
	first := v.Violations[0]
	for _, x := range v.Violations[1:] {
		if x.Time < first.Time {
			first = x
		}
	}
	// from: the earliest of the involved clients' last grants before it,
	// from the call that led to it (its items were written meanwhile).
	from := first.Time
	names := map[string]bool{}
	for _, c := range first.Clients {
		names[clientName(h, c)] = true
		called, grant := int64(-1), int64(-1)
		for _, e := range h.Events {
			if e.Time > first.Time {
				break
			}
			switch {
			case e.Client != c:
			case e.Kind == model.AcquireCall:
				called = e.Time
			case e.Kind == model.AcquireReturn && e.Granted:
				grant = max(called, 0)
			}
		}
		if grant >= 0 {
			from = min(from, grant)
		}
	}
	for i, l := range lines {
		if l.time < from || l.time > first.Time {
			continue
		}
		switch {
		case l.rank == rankFault, l.rank == rankViolation:
			keep[i] = true
		case slices.ContainsFunc(l.clients, func(c string) bool { return names[c] }):
			keep[i] = true
		case names[l.who] && (strings.HasPrefix(l.text, "acquire → granted") || strings.HasPrefix(l.text, "belief ends") ||
			strings.HasPrefix(l.text, "release") || strings.HasPrefix(l.text, "pauses") || strings.HasPrefix(l.text, "client stops")):
			keep[i] = true
		}
	}
}

// index is the index of the first line satisfying f, or len(lines).
func index(lines []timelineLine, f func(timelineLine) bool) int {
	if i := slices.IndexFunc(lines, f); i >= 0 {
		return i
	}
	return len(lines)
}

// whoWidth is the width of the widest client name among the lines.
func whoWidth(lines []timelineLine) int {
	w := len(faultMarker)
	for _, l := range lines {
		if l.rank == rankEvent {
			w = max(w, len(l.who))
		}
	}
	return w
}

// requestLines are the lines of a real-code run's trace that say what the
// nodes were asked and answered: "n0 <- h1/t0: set k v nx px 8000 =>
// OK" becomes a line of n0 about h1/t0, "← h1/t0: set ... => OK"; a
// connection lost or reset, a line of its node. Other trace lines (dials,
// the resource, faults the plan already shows) are left out. Lines come
// after the events of their instant, in the trace's order. With a
// violation, only the requests of the clients it names have lines (the
// others' retries would bury them), and they show only within the window
// around it: a request line never widens what the timeline keeps.
func requestLines(h model.History, v model.Verdict, trace []model.TraceEvent) []timelineLine {
	involved := map[string]bool{}
	if len(v.Violations) > 0 {
		for _, c := range v.Violations[0].Clients {
			involved[clientName(h, c)] = true
		}
	}
	var lines []timelineLine
	order := len(h.Events) + len(h.Moves) + len(h.Items)
	for _, e := range trace {
		who, text, client, ok := requestLine(e.What)
		if !ok || len(involved) > 0 && !involved[client] && !effective(text) {
			continue
		}
		order++
		lines = append(lines, timelineLine{time: e.Time, rank: rankEvent, order: order, who: who, text: text})
	}
	return lines
}

// requestLine parses one trace line of sim/realredis: a request applied
// ("n0 <- h1/t0: ...") or a connection lost or reset ("h1/t0->n0
// connection lost: ...").
func requestLine(what string) (who, text, client string, ok bool) {
	if node, rest, found := strings.Cut(what, " <- "); found && isNode(node) {
		client, _, _ = strings.Cut(rest, ":")
		return node, "← " + rest, client, true
	}
	if from, rest, found := strings.Cut(what, "->"); found {
		node, why, found := strings.Cut(rest, " connection ")
		if found && isNode(node) && !strings.Contains(from, " ") {
			return node, from + "'s connection " + why, from, true
		}
	}
	return "", "", "", false
}

// isNode: "n" and digits, a node's name in a trace.
func isNode(s string) bool {
	if len(s) < 2 || s[0] != 'n' {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// extendText says what an Extend call answered.
func extendText(x model.Extend) string {
	took := formatLatency(time.Duration(x.Time - x.Called))
	by := ""
	if x.OK && x.Reason != "" {
		by = x.Reason + ", " // who extended, when it was not the holder itself
	}
	switch {
	case !x.OK:
		return fmt.Sprintf("extend → failed (%s, took %s)", x.Reason, took)
	case x.To != 0:
		return fmt.Sprintf("extend → extended (%svalid to %s, took %s)", by, strings.TrimSpace(formatTime(x.To)), took)
	}
	return fmt.Sprintf("extend → extended (%stook %s)", by, took)
}

// grantValidity is each extended grant's own validity, by the Seq of its
// AcquireReturn: a grant's ValidUntilTrue is the last validity an Extend
// reported (what the checkers hold the hold to), and its first Extend
// says what it was before.
func grantValidity(h model.History) map[uint64]int64 {
	if len(h.Extends) == 0 {
		return nil
	}
	own := map[uint64]int64{}
	for _, x := range h.Extends {
		var grant *model.Event
		for i := range h.Events {
			e := &h.Events[i]
			if e.Time > x.Called {
				break
			}
			if e.Client == x.Client && e.Kind == model.AcquireReturn && e.Granted {
				grant = e
			}
		}
		if grant != nil && x.From != 0 {
			if _, seen := own[grant.Seq]; !seen {
				own[grant.Seq] = x.From
			}
		}
	}
	return own
}

// effective reports whether a request line's reply says the request did
// something: not nil, not 0, not an error.
func effective(text string) bool {
	i := strings.LastIndex(text, " => ")
	if i < 0 {
		return false
	}
	switch r := text[i+4:]; {
	case r == "(nil)", r == "(integer) 0", strings.HasPrefix(r, "(error)"), strings.HasPrefix(r, "ERR"):
		return false
	}
	return true
}
