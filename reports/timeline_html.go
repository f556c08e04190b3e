package reports

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// TimelinePage writes one run's lock history as a self-contained HTML
// page, in the spirit of Jepsen's timeline.html: a lane per client with
// its holds (grant to the end of its belief, then, lighter, to its last
// access to the resource), failed attempts and resource accesses; a lane
// per node with its faults, restarts and lock items; the topology's
// changes; pauses and clock jumps where they strike. The first violation
// is in the first screen: the main chart is zoomed on it when the run is
// long, under a strip of the whole run, and what makes it is drawn in red
// (the two overlapping holds and their overlap, a lost update's accesses,
// a liveness failure's waits over the time a majority was reachable, with
// why nobody got the lock under the chart).
//
// The page is static HTML with inline SVG and CSS: no script, nothing
// fetched. Its bytes depend only on the arguments. Drawing is linear in
// the history, and what is drawn is bounded by the chart's pixels: marks
// too close to tell apart are drawn as one (a run of denied attempts, of
// short holds), or one of them (accesses).
func TimelinePage(w io.Writer, h model.History, plan faults.Plan, v model.Verdict, info PageInfo) error {
	p := newTLPage(h, plan, v)
	var b strings.Builder
	p.writeHeader(&b, info)
	if p.zoomed {
		p.writeOverview(&b)
	}
	p.writeMain(&b)
	tlLegend(&b)
	p.writeNotes(&b)
	p.writeRequests(&b, info.Requests)
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Geometry of the page, in CSS pixels (an SVG unit is a pixel): it fits a
// 1280×800 window, scrollbar included, without scrolling sideways.
const (
	tlWidth      = 1236.0 // every chart's width
	tlPlotX      = 72.0   // where time starts: lane names are left of it
	tlPlotW      = tlWidth - tlPlotX - 20
	tlAxisH      = 22.0 // the main chart's time axis, above its lanes
	tlClientH    = 28.0 // a client's lane
	tlNodeH      = 22.0 // a node's lane, and the topology's
	tlLaneBudget = 470.0
	tlMinLaneH   = 0.7 // lanes shrink at most to this fraction to fit the budget
	tlOverRowH   = 4.0 // a lane's row in the overview strip
	tlFontPx     = 10.0
	tlCharW      = 0.64 // estimated width of a character, in font sizes
	tlMinWindow  = int64(time.Second)
)

// tlPalette are the clients' colours, clearly distinct and none of them
// the violations' red; with each, the colour text written on it takes.
var tlPalette = [][2]string{
	{"#1f77b4", "#fff"}, {"#ff7f0e", "#000"}, {"#2ca02c", "#fff"}, {"#9467bd", "#fff"},
	{"#8c564b", "#fff"}, {"#e377c2", "#000"}, {"#17becf", "#000"}, {"#bcbd22", "#000"},
	{"#393b79", "#fff"}, {"#b8860b", "#000"},
}

// tlHold is a hold as the page draws it.
type tlHold struct {
	model.Hold
	usedTo     int64 // its last resource access (0: none)
	uses       int   // how many accesses it made
	token      uint64
	hasToken   bool
	validUntil int64
	hl         bool // one of the overlapping holds of the first mutual exclusion
}

// tlWait is a waiting client of a liveness violation, and the parts of
// its wait that counted: a majority of the key's nodes up and reachable.
type tlWait struct {
	client   int
	from, to int64
	counted  [][2]int64
	bound    int64 // when the wait passed the liveness bound
}

// tlLeft is a lock item left behind (a leftover violation).
type tlLeft struct {
	node            string
	from, to, bound int64
}

// tlPage is what the page draws, derived from the history once.
type tlPage struct {
	h      model.History
	plan   faults.Plan
	v      model.Verdict
	end    int64
	n      int               // client lanes
	holds  [][]tlHold        // per client, in start order
	tries  [][]model.Attempt // per client, its attempts that were not granted
	uses   [][]model.Event   // per client, its resource accesses in Seq order
	stops  [][]model.Event   // per client, its ClientStop events
	nodes  []string          // node lanes, in index order
	topo   bool              // a lane for the key's topology
	first  *model.Violation  // the violation the view is centred on
	from   int64             // the main chart's window of true time: from…
	to     int64             // …to
	hlUse  []uint64          // Seqs of the accesses of the first lost update
	over   [2]int64          // the first mutual exclusion's overlap
	pair   [2]int            // its earlier and later holder; -1: no overlap known
	waits  []tlWait          // the first liveness violation's waits
	left   []tlLeft          // the first leftover's item
	why    string            // why nobody got the lock, for the liveness violation
	later  []model.Violation // every violation, first ones and later ones, in time order
	fs     []tlFault         // the faults, as drawn
	zoomed bool
}

func newTLPage(h model.History, plan faults.Plan, v model.Verdict) *tlPage {
	p := &tlPage{h: h, plan: plan, v: v, end: tlRunEnd(h), n: len(h.Clients), pair: [2]int{-1, -1}}
	for _, e := range h.Events {
		p.n = max(p.n, e.Client+1)
	}
	p.splitEvents()
	p.nodes = tlNodeLanes(h, plan, p.end)
	p.topo = len(h.Moves) > 0 || slices.ContainsFunc(plan.Events, func(e faults.Event) bool {
		return e.Kind == faults.Topology && e.Point == "" && int64(e.At) <= p.end
	})
	p.later = append(slices.Clone(v.Violations), v.Later...)
	slices.SortStableFunc(p.later, func(a, b model.Violation) int { return cmp.Compare(a.Time, b.Time) })
	lo, hi := int64(0), p.end
	for i, x := range v.Violations {
		xlo, xhi := p.highlight(x)
		if p.first == nil || x.Time < p.first.Time {
			p.first, lo, hi = &v.Violations[i], xlo, xhi
		}
	}
	p.from, p.to, p.zoomed = tlViewWindow(lo, hi, p.end, p.first != nil)
	p.fs = append(p.planFaults(), p.historyFaults()...)
	return p
}

// tlRunEnd is when the run ended, or the last instant it recorded.
func tlRunEnd(h model.History) int64 {
	end := h.End
	for _, e := range h.Events {
		end = max(end, e.Time)
	}
	if end <= 0 {
		return tlMinWindow
	}
	return end
}

// splitEvents derives the holds, failed attempts, accesses and stops of
// each client, and ties each access to the hold of its client's last
// grant before it (a paused holder's late write is that hold's).
func (p *tlPage) splitEvents() {
	p.holds, p.tries = make([][]tlHold, p.n), make([][]model.Attempt, p.n)
	p.uses, p.stops = make([][]model.Event, p.n), make([][]model.Event, p.n)
	for _, hd := range model.Holds(p.h) {
		if hd.Client >= 0 && hd.Client < p.n {
			p.holds[hd.Client] = append(p.holds[hd.Client], tlHold{Hold: hd})
		}
	}
	for _, a := range model.Attempts(p.h) {
		if a.Client >= 0 && a.Client < p.n && a.Outcome != model.Granted {
			p.tries[a.Client] = append(p.tries[a.Client], a)
		}
	}
	next := make([]int, p.n) // per client: the hold its next access may belong to
	for _, e := range tlEventsBySeq(p.h) {
		if e.Client < 0 || e.Client >= p.n {
			continue
		}
		switch e.Kind {
		case model.AcquireReturn:
			if i := p.holdAt(e.Client, e.Seq); i >= 0 && e.Granted {
				hd := &p.holds[e.Client][i]
				hd.token, hd.hasToken, hd.validUntil = e.Token, e.HasToken, e.ValidUntilTrue
			}
		case model.ResourceRead, model.ResourceWrite:
			p.uses[e.Client] = append(p.uses[e.Client], e)
			hs, k := p.holds[e.Client], next[e.Client]
			for k+1 < len(hs) && hs[k+1].StartSeq < e.Seq {
				k++
			}
			next[e.Client] = k
			if k < len(hs) && hs[k].StartSeq < e.Seq {
				hs[k].usedTo, hs[k].uses = max(hs[k].usedTo, e.Time), hs[k].uses+1
			}
		case model.ClientStop:
			p.stops[e.Client] = append(p.stops[e.Client], e)
		}
	}
}

// holdAt is the index of client's hold granted at seq, or -1.
func (p *tlPage) holdAt(client int, seq uint64) int {
	i, ok := slices.BinarySearchFunc(p.holds[client], seq, func(hd tlHold, s uint64) int { return cmp.Compare(hd.StartSeq, s) })
	if !ok {
		return -1
	}
	return i
}

// tlEventsBySeq is h.Events in Seq order, as the History promises them;
// sorted when a hand-made one is not.
func tlEventsBySeq(h model.History) []model.Event {
	ev := h.Events
	for i := 1; i < len(ev); i++ {
		if ev[i].Seq < ev[i-1].Seq {
			ev = slices.Clone(ev)
			slices.SortStableFunc(ev, func(a, b model.Event) int { return cmp.Compare(a.Seq, b.Seq) })
			return ev
		}
	}
	return ev
}

// tlNodeLanes names every node the run says something of, in index order:
// faults, restarts, topologies, lock items, lost data.
func tlNodeLanes(h model.History, plan faults.Plan, end int64) []string {
	var names []string
	node := func(i int) { names = append(names, processName(faults.NodeProcess, i)) }
	for _, f := range plan.Events {
		switch {
		case int64(f.At) > end:
		case f.Kind == faults.Crash || f.Kind == faults.Clog:
			node(f.Node)
		case f.Kind == faults.Partition || f.Kind == faults.Topology:
			for _, x := range f.Nodes {
				node(x)
			}
		case f.Kind == faults.ClockJump && f.Target == faults.NodeProcess:
			node(f.Index)
		}
	}
	for _, r := range h.Restarts {
		node(r.Node)
	}
	for _, mv := range h.Moves {
		for _, x := range mv.Nodes {
			node(x)
		}
	}
	for _, it := range tlLockItems(h) {
		names = append(names, it.Node)
	}
	for _, d := range h.DataLoss {
		names = append(names, d.Node)
	}
	slices.SortFunc(names, tlCompareNodes)
	return slices.Compact(names)
}

// tlLockItems are the lock items' stays the page draws: History.Items, or
// without them the long ones; never the application's data.
func tlLockItems(h model.History) []model.ItemLife {
	src := h.Items
	if len(src) == 0 {
		src = h.LongItems
	}
	out := make([]model.ItemLife, 0, len(src))
	for _, it := range src {
		if !it.App && it.Node != "" {
			out = append(out, it)
		}
	}
	return out
}

// tlCompareNodes orders "n2" before "n10", and names of another form
// after those, alphabetically.
func tlCompareNodes(a, b string) int {
	ai, aok := tlNodeNumber(a)
	bi, bok := tlNodeNumber(b)
	switch {
	case aok && bok:
		return cmp.Or(cmp.Compare(ai, bi), strings.Compare(a, b))
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}

func tlNodeNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "n")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil
}

// highlight marks what violation x is made of, and returns the stretch
// of true time that shows it.
func (p *tlPage) highlight(x model.Violation) (lo, hi int64) {
	lo, hi = x.Time, max(x.Time, x.End)
	switch x.Kind {
	case model.MutualExclusion:
		if a, b, ok := p.highlightOverlap(x); ok {
			lo, hi = a, b
		}
	case model.LostUpdate:
		if a, b, ok := p.highlightLostUpdate(x); ok {
			lo, hi = a, b
		}
	case model.Liveness:
		p.highlightWaits(x)
	case model.Leftover:
		p.highlightLeftover(x)
	}
	return lo, hi
}

// highlightOverlap finds the two holds of a mutual exclusion: the later
// holder's, granted at x.Time, and the earlier holder's that was still
// believed then (the one believed longest).
func (p *tlPage) highlightOverlap(x model.Violation) (lo, hi int64, ok bool) {
	if len(x.Clients) < 2 || !p.valid(x.Clients[0]) || !p.valid(x.Clients[1]) {
		return 0, 0, false
	}
	ea, la := x.Clients[0], x.Clients[1]
	li := slices.IndexFunc(p.holds[la], func(hd tlHold) bool { return hd.StartTime == x.Time })
	if li < 0 {
		return 0, 0, false
	}
	later := &p.holds[la][li]
	ei := -1
	for i, hd := range p.holds[ea] {
		if hd.StartSeq < later.StartSeq && hd.EndSeq > later.StartSeq && (ei < 0 || hd.EndSeq > p.holds[ea][ei].EndSeq) {
			ei = i
		}
	}
	if ei < 0 {
		return 0, 0, false
	}
	earlier := &p.holds[ea][ei]
	earlier.hl, later.hl = true, true
	p.over = [2]int64{later.StartTime, max(later.StartTime, min(earlier.EndTime, later.EndTime))}
	p.pair = [2]int{ea, la}
	// The earlier hold from its grant, unless that is far back: then the
	// overlap with as much again before it, the hold running in from the
	// left edge.
	w := p.over[1] - p.over[0]
	return max(earlier.StartTime, p.over[0]-3*w-tlMinWindow), p.over[1], true
}

func (p *tlPage) valid(c int) bool { return c >= 0 && c < p.n }

// tlIncrement is a client's accepted read and its next write, accepted.
type tlIncrement struct{ read, write model.Event }

// tlIncrements pairs a client's accesses as the counter checker does.
func tlIncrements(uses []model.Event) []tlIncrement {
	var out []tlIncrement
	read := -1
	for i, e := range uses {
		switch {
		case e.Kind == model.ResourceRead && e.Accepted:
			read = i
		case e.Kind == model.ResourceWrite:
			if read >= 0 && e.Accepted {
				out = append(out, tlIncrement{uses[read], e})
			}
			read = -1
		}
	}
	return out
}

// highlightLostUpdate marks the accesses of a lost update: the two
// increments that read the same value, the second one's write at x.Time;
// or, for an access no order could place, that access and its write.
func (p *tlPage) highlightLostUpdate(x model.Violation) (lo, hi int64, ok bool) {
	var incs []tlIncrement
	for i, c := range x.Clients {
		if p.valid(c) && !slices.Contains(x.Clients[:i], c) {
			incs = append(incs, tlIncrements(p.uses[c])...)
		}
	}
	second := slices.IndexFunc(incs, func(in tlIncrement) bool { return in.write.Time == x.Time })
	first := -1
	for j, in := range incs {
		if second >= 0 && j != second && in.read.Value == incs[second].read.Value &&
			(first < 0 || in.write.Seq > incs[first].write.Seq) {
			first = j
		}
	}
	var marked []tlIncrement
	switch {
	case second >= 0 && first >= 0:
		marked = []tlIncrement{incs[first], incs[second]}
	default:
		i := slices.IndexFunc(incs, func(in tlIncrement) bool { return in.read.Time == x.Time || in.write.Time == x.Time })
		if i < 0 {
			return 0, 0, false
		}
		marked = incs[i : i+1]
	}
	lo, hi = x.Time, x.Time
	for _, in := range marked {
		p.hlUse = append(p.hlUse, in.read.Seq, in.write.Seq)
		lo, hi = min(lo, in.read.Time, tlSentOr(in.read)), max(hi, in.write.Time)
	}
	slices.Sort(p.hlUse)
	return lo, hi, true
}

// tlSentOr is when an access left its client, or its arrival without that.
func tlSentOr(e model.Event) int64 {
	if e.Sent > 0 && e.Sent < e.Time {
		return e.Sent
	}
	return e.Time
}

// highlightWaits marks a liveness violation's waits: its no-holder
// window's waits, each with the stretches its client could reach a
// majority, and says why nobody got the lock.
func (p *tlPage) highlightWaits(x model.Violation) {
	end := max(x.End, x.Time)
	for _, w := range model.NoHolderWindows(p.h) {
		if w.Start <= x.Time && x.Time <= w.End && slices.Equal(w.Clients, x.Clients) {
			for _, cw := range w.Waits {
				p.waits = append(p.waits, tlWait{client: cw.Client, from: cw.From, to: cw.To, bound: end})
			}
			break
		}
	}
	if len(p.waits) == 0 {
		for _, c := range x.Clients {
			p.waits = append(p.waits, tlWait{client: c, from: x.Time, to: end, bound: end})
		}
	}
	for i := range p.waits {
		w := &p.waits[i]
		if !p.h.Reachable {
			if lo := max(w.from, p.h.Healed); lo < w.to {
				w.counted = append(w.counted, [2]int64{lo, w.to})
			}
			continue
		}
		for _, r := range p.h.Reach {
			if lo, hi := max(r.From, w.from), min(r.To, w.to); r.Client == w.client && hi > lo {
				w.counted = append(w.counted, [2]int64{lo, hi})
			}
		}
	}
	if why, ok := model.ExplainWait(p.h, x); ok {
		p.why = why.String()
	}
}

// highlightLeftover marks the lock item a leftover violation is about.
func (p *tlPage) highlightLeftover(x model.Violation) {
	if len(x.Clients) == 0 {
		return
	}
	for _, it := range p.h.LongItems {
		if !it.App && it.Client == x.Clients[0] && it.From <= x.Time && it.To >= x.End {
			p.left = append(p.left, tlLeft{node: it.Node, from: x.Time, to: it.To, bound: x.End})
			return
		}
	}
}

// tlViewWindow is the main chart's stretch of true time: [lo, hi] with a
// margin, at least tlMinWindow wide; the whole run when that would show
// most of it anyway.
func tlViewWindow(lo, hi, end int64, focus bool) (from, to int64, zoomed bool) {
	if !focus {
		return 0, end, false
	}
	lo, hi = min(max(lo, 0), end), min(max(hi, 0), end)
	pad := max((hi-lo)/6, (tlMinWindow-(hi-lo))/2)
	from, to = lo-pad, hi+pad
	if from < 0 {
		from, to = 0, to-from
	}
	if to > end {
		from, to = max(0, from-(to-end)), end
	}
	if to-from >= end*6/10 {
		return 0, end, false
	}
	return from, to, true
}

// tlScale maps true time to x in a chart.
type tlScale struct {
	from, to int64
	x0, w    float64
}

func (s tlScale) x(t int64) float64 {
	return s.x0 + float64(t-s.from)/float64(max(1, s.to-s.from))*s.w
}

// clampX is x(t) kept inside the chart.
func (s tlScale) clampX(t int64) float64 { return min(max(s.x(t), s.x0), s.x0+s.w) }

// shows reports whether [a, b] meets the chart's window.
func (s tlScale) shows(a, b int64) bool { return b >= s.from && a <= s.to }

// tlLane is one lane of a chart: a client's, a node's or the topology's.
type tlLane struct {
	y, h   float64
	name   string
	client int // -1: not a client's
	node   string
}

// layout stacks the main chart's lanes under its axis, shrinking them
// (down to tlMinLaneH) to keep the chart within the first screen.
func (p *tlPage) layout() ([]tlLane, float64) {
	others := len(p.nodes)
	if p.topo {
		others++
	}
	ch, nh := tlClientH, tlNodeH
	if total := float64(p.n)*ch + float64(others)*nh; total > tlLaneBudget {
		f := max(tlLaneBudget/total, tlMinLaneH)
		ch, nh = ch*f, nh*f
	}
	lanes := make([]tlLane, 0, p.n+others)
	y := tlAxisH
	for c := range p.n {
		lanes = append(lanes, tlLane{y: y, h: ch, name: clientName(p.h, c), client: c})
		y += ch
	}
	for _, n := range p.nodes {
		lanes = append(lanes, tlLane{y: y, h: nh, name: n, client: -1, node: n})
		y += nh
	}
	if p.topo {
		lanes = append(lanes, tlLane{y: y, h: nh, name: "topology", client: -1})
		y += nh
	}
	return lanes, y + 4
}

// nodeLane is the index of node's lane, or -1.
func (p *tlPage) nodeLane(node string) int {
	i, ok := slices.BinarySearchFunc(p.nodes, node, tlCompareNodes)
	if !ok {
		return -1
	}
	return p.n + i
}

// tlLabelY and the others place things within a lane, by fractions of
// its height: the labels' row, the holds' bar, the failed attempts' row,
// a node's lock items, a write's tick (full) or a read's.
func tlLabelY(l tlLane) float64        { return l.y + max(0.33*l.h, 8) }
func tlBarY(l tlLane) (y, h float64)   { return l.y + 0.38*l.h, 0.42 * l.h }
func tlTriesY(l tlLane) (y, h float64) { return l.y + 0.84*l.h, 0.12 * l.h }
func tlItemY(l tlLane) (y, h float64)  { return l.y + 0.56*l.h, 0.28 * l.h }
func tlTickY(l tlLane, full bool) (y1, y2 float64) {
	if full {
		return l.y + 0.3*l.h, l.y + 0.86*l.h
	}
	return l.y + 0.56*l.h, l.y + 0.86*l.h
}

// tlF1 writes a coordinate with one decimal: exact enough, and short.
func tlF1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// tlTextWidth estimates how wide text is at the labels' font size.
func tlTextWidth(text string) float64 {
	return float64(utf8.RuneCountInString(text)) * tlFontPx * tlCharW
}

// tlRect writes an SVG rect, with a tooltip when title is not empty.
func tlRect(b *strings.Builder, x, y, w, h float64, class, title string) {
	fmt.Fprintf(b, `<rect class="%s" x="%s" y="%s" width="%s" height="%s"`, class, tlF1(x), tlF1(y), tlF1(max(w, 0)), tlF1(max(h, 0)))
	if title == "" {
		b.WriteString("/>")
		return
	}
	fmt.Fprintf(b, "><title>%s</title></rect>", html.EscapeString(title))
}

// tlLine writes an SVG line, with a tooltip when title is not empty.
func tlLine(b *strings.Builder, x1, y1, x2, y2 float64, class, title string) {
	fmt.Fprintf(b, `<line class="%s" x1="%s" y1="%s" x2="%s" y2="%s"`, class, tlF1(x1), tlF1(y1), tlF1(x2), tlF1(y2))
	if title == "" {
		b.WriteString("/>")
		return
	}
	fmt.Fprintf(b, "><title>%s</title></line>", html.EscapeString(title))
}

// tlSecs writes a true time without padding: "62.015s".
func tlSecs(t int64) string { return strings.TrimSpace(formatTime(t)) }

// tlFault is a fault as the charts draw it: a span of true time on some
// lanes (a point when from == to), its label and its tooltip.
type tlFault struct {
	lanes    []int // indexes of the main chart's lanes
	from, to int64
	class    string // down, clog, part, pause, jump, shift, restart, topo, spread
	text     string
	title    string
}

// planFaults are the plan's timed faults that started before the run
// ended, cut at its end.
func (p *tlPage) planFaults() []tlFault {
	var out []tlFault
	for _, f := range p.plan.Events {
		at := int64(f.At)
		if at > p.end {
			continue
		}
		fl := tlFault{from: at, to: min(at+int64(f.For), p.end), text: faultStart(p.h, f)}
		switch f.Kind {
		case faults.Crash:
			if f.For <= 0 {
				fl.to = p.end
			}
			fl.class, fl.lanes = "down", p.lanesOfNodes([]int{f.Node})
		case faults.Clog:
			fl.class, fl.lanes = "clog", p.lanesOfNodes([]int{f.Node})
		case faults.Partition:
			fl.class, fl.lanes = "part", append(p.lanesOfNodes(f.Nodes), p.hostLanes(f.Hosts)...)
		case faults.ClockJump:
			fl.class, fl.to, fl.text = "jump", at, "jump "+formatSigned(f.Delta)
			fl.lanes = p.lanesOfNodes([]int{f.Index})
			if f.Target == faults.HostProcess {
				fl.lanes = p.hostLanes([]int{f.Index})
			}
		case faults.Pause:
			if f.Point != "" || !p.valid(f.Client) {
				continue // one that waited for a point is in History.Pauses, when it struck
			}
			fl.class, fl.text, fl.lanes = "pause", "paused "+formatDuration(f.For), []int{f.Client}
		case faults.Topology:
			if f.Point != "" {
				continue // one that waited for a hold is in History.Moves, when it struck
			}
			fl.class, fl.text, fl.lanes = "topo", "→ "+nodeList(f.Nodes), []int{p.topoLane()}
		default:
			continue
		}
		fl.title = faultStart(p.h, f) + ", at " + tlSecs(at)
		out = append(out, fl)
	}
	return out
}

// historyFaults are what the history says struck: pauses at fault
// points, restarts, topology changes that waited for a hold and the
// spread of every change, and the hosts' daylight-saving shifts.
func (p *tlPage) historyFaults() []tlFault {
	var out []tlFault
	for _, pp := range p.h.Pauses {
		if p.valid(pp.Client) && pp.Time <= p.end {
			text := "paused " + formatDuration(time.Duration(pp.For)) + " at " + pp.Point
			out = append(out, tlFault{lanes: []int{pp.Client}, from: pp.Time, to: min(pp.Time+pp.For, p.end),
				class: "pause", text: text, title: clientName(p.h, pp.Client) + " " + text + ", at " + tlSecs(pp.Time)})
		}
	}
	for _, r := range p.h.Restarts {
		text := "restart"
		if r.Empty {
			text = "restart, empty"
		}
		out = append(out, tlFault{lanes: p.lanesOfNodes([]int{r.Node}), from: r.Time, to: r.Time, class: "restart",
			text: text, title: processName(faults.NodeProcess, r.Node) + " restarts at " + tlSecs(r.Time)})
	}
	for _, mv := range p.h.Moves {
		lane := []int{p.topoLane()}
		if mv.Time > 0 && !plannedMoveAt(p.plan, mv.Time) {
			out = append(out, tlFault{lanes: lane, from: mv.Time, to: mv.Time, class: "topo",
				text: "→ " + nodeList(mv.Nodes), title: "topology → " + nodeList(mv.Nodes) + " at " + tlSecs(mv.Time)})
		}
		if mv.Until > mv.Time {
			out = append(out, tlFault{lanes: lane, from: mv.Time, to: mv.Until, class: "spread",
				title: "clients learn of the topology " + nodeList(mv.Nodes) + " until " + tlSecs(mv.Until)})
		}
	}
	for _, z := range p.plan.Zones {
		if at := int64(z.ShiftAt); z.Shift != 0 && at <= p.end {
			text := "local time " + formatSigned(z.Shift)
			out = append(out, tlFault{lanes: p.hostLanes([]int{z.Host}), from: at, to: at, class: "shift",
				text: text, title: processName(faults.HostProcess, z.Host) + " " + text + " at " + tlSecs(at)})
		}
	}
	return out
}

// lanesOfNodes are the lanes of nodes by index.
func (p *tlPage) lanesOfNodes(nodes []int) []int {
	var out []int
	for _, n := range nodes {
		if i := p.nodeLane(processName(faults.NodeProcess, n)); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// hostLanes are the lanes of the clients of hosts by index.
func (p *tlPage) hostLanes(hosts []int) []int {
	var out []int
	for _, x := range hosts {
		host := processName(faults.HostProcess, x)
		for c, cl := range p.h.Clients {
			if cl.Host == host {
				out = append(out, c)
			}
		}
	}
	return out
}

func (p *tlPage) topoLane() int { return p.n + len(p.nodes) }

// Label priorities: what makes the violation is placed first, then the
// faults, then the rest.
const (
	tlPrioViolation = iota
	tlPrioFault
	tlPrioEvent
	tlPrioAccess
)

// tlLabel is a text label in a lane's label row: at x, or, for a span's,
// anywhere right of it up to upTo.
type tlLabel struct {
	lane    int
	x, upTo float64
	text    string
	prio    int
	class   string
}

type tlLabels []tlLabel

// add labels an instant: the label goes at x or nowhere.
func (ls *tlLabels) add(lane int, x float64, text string, prio int, class string) {
	*ls = append(*ls, tlLabel{lane, x, x, text, prio, class})
}

// addSpan labels a span from x1 to x2: the label starts anywhere in it.
func (ls *tlLabels) addSpan(lane int, x1, x2 float64, text string, prio int, class string) {
	*ls = append(*ls, tlLabel{lane, x1 + 2, max(x1+2, x2-6), text, prio, class})
}

// write places the labels, most important first, each at the first place
// it may take where it overlaps no label already placed in its lane's row;
// the others are dropped (the marks they name keep their tooltips).
func (ls tlLabels) write(b *strings.Builder, lanes []tlLane) {
	slices.SortStableFunc(ls, func(a, b tlLabel) int { return cmp.Compare(a.prio, b.prio) })
	taken := make([][][2]float64, len(lanes))
	for _, l := range ls {
		if l.lane < 0 || l.lane >= len(lanes) {
			continue
		}
		w := tlTextWidth(l.text)
		right := tlPlotX + tlPlotW - w
		x, upTo := max(min(l.x, right), tlPlotX), min(l.upTo, right)
		for x <= max(upTo, l.x) {
			i := slices.IndexFunc(taken[l.lane], func(s [2]float64) bool { return x < s[1]+4 && s[0] < x+w+4 })
			if i < 0 {
				break
			}
			x = taken[l.lane][i][1] + 4.5 // after the label in the way, if the span reaches so far
		}
		if x > max(upTo, min(l.x, right)) {
			continue
		}
		taken[l.lane] = append(taken[l.lane], [2]float64{x, x + w})
		fmt.Fprintf(b, `<text class="lbl %s" x="%s" y="%s">%s</text>`, l.class, tlF1(x), tlF1(tlLabelY(lanes[l.lane])), html.EscapeString(l.text))
	}
}

// tlRun gathers marks too narrow to draw one by one that touch: they
// are drawn as one, with their count.
type tlRun struct {
	x1, x2   float64
	from, to int64
	n, first int
}

// join adds a mark to the run if it touches it (within gap), and reports
// whether it did.
func (r *tlRun) join(x1, x2 float64, from, to int64, gap float64) bool {
	if r.n == 0 || x1 > r.x2+gap {
		return false
	}
	r.x2, r.to, r.n = max(r.x2, x2), max(r.to, to), r.n+1
	return true
}

func (r *tlRun) start(x1, x2 float64, from, to int64, i int) {
	*r = tlRun{x1: x1, x2: x2, from: from, to: to, n: 1, first: i}
}

// writeHeader writes the head and what the page is of: the run, its first
// violation in words, how to replay it, and the links.
func (p *tlPage) writeHeader(b *strings.Builder, info PageInfo) {
	title := "locksim timeline"
	if info.Variant != "" {
		title = fmt.Sprintf("locksim timeline: %s, seed %d", info.Variant, info.Seed)
	}
	violation := info.Violation
	if violation == "" && p.first != nil {
		violation = p.first.String()
	}
	esc := html.EscapeString
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n",
		esc(title), tlCSS())
	fmt.Fprintf(b, "<h1>%s</h1>\n", esc(title))
	if violation != "" {
		fmt.Fprintf(b, "<p class=\"v\">%s</p>\n", esc(violation))
	} else {
		b.WriteString("<p>no violation</p>\n")
	}
	var links []string
	if info.Replay != "" {
		links = append(links, "replay: <code>"+esc(info.Replay)+"</code>")
	}
	if info.Back != "" {
		links = append(links, `<a href="`+esc(info.Back)+`">back to `+esc(cmp.Or(info.BackTo, "the matrix"))+`</a>`)
	}
	if info.Porcupine != "" {
		links = append(links, `<a href="`+esc(info.Porcupine)+`">linearizability check (porcupine)</a>`)
	}
	if len(links) > 0 {
		fmt.Fprintf(b, "<p>%s</p>\n", strings.Join(links, " · "))
	}
}

// tlCSS is the page's style sheet, the clients' colours included.
func tlCSS() string {
	var b strings.Builder
	b.WriteString(`body{font:13px/1.4 sans-serif;margin:8px 12px;color:#222}
h1{font-size:17px;margin:0}
p{margin:2px 0}
.v{color:#b3141b;font-weight:bold}
code{font-size:12px;background:#f2f2f2;padding:0 3px}
.cap{font-size:12px;color:#555;margin-top:4px}
svg{display:block}
svg text{font-size:10px;font-family:sans-serif;fill:#222}
text.ln{font-size:11px;font-weight:bold}
text.ax{text-anchor:middle;fill:#555}
text.lbl.v{fill:#b3141b;font-weight:bold}
.lane0{fill:#fff}.lane1{fill:#f5f6f8}.lanen{fill:#eef3f8}
.sep{stroke:#bbb}.grid{stroke:#e4e4e4}
.used{opacity:.35}
.hl{stroke:#d62728;stroke-width:2}
.try{fill:#999}.try.unk{fill:#d0d0d0}
.r,.w{stroke:#111;stroke-width:1.3}.rej{stroke:#999;stroke-width:1.3;stroke-dasharray:2 1}
.sent{stroke:#111;stroke-opacity:.4}
.usehl,.hlbox{fill:none;stroke:#d62728;stroke-width:1.6}
.overlap{fill:#d62728;fill-opacity:.1}
.ovl{fill:url(#tlover);stroke:#d62728;stroke-width:1.5}
.wait{fill:url(#tlwait)}
.reach{fill:#f08080;fill-opacity:.8;stroke:#d62728;stroke-width:.8}
.bound{stroke:#d62728;stroke-width:1.5;stroke-dasharray:4 3}
.f.down{fill:#555;fill-opacity:.35}.f.clog{fill:#f0a020;fill-opacity:.35}
.f.part{fill:#8e6cc8;fill-opacity:.3}.f.pause{fill:url(#tlpause)}
.f.topo,.f.spread{fill:#2a9d8f;fill-opacity:.15}
.pt{stroke-width:1.6}.pt.jump,.pt.shift{stroke:#c05a00;stroke-dasharray:3 2}
.pt.restart{stroke:#2a7a2a}.pt.topo{stroke:#2a9d8f}
.lost{stroke:#b3141b;stroke-width:2}.stop{fill:#222}.abort,.vm{fill:#d62728}
.win{fill:#1f4e99;fill-opacity:.08;stroke:#1f4e99;stroke-width:1.5}
.ovbg{fill:#f3f3f3}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;margin:6px 0 4px;font-size:12px}
.legend span{white-space:nowrap}
.legend svg{display:inline-block;vertical-align:middle;margin-right:4px}
.notes ul{margin:2px 0;padding-left:20px}
.notes pre.requests{font:11px/1.35 ui-monospace,monospace;white-space:pre;overflow-x:auto;background:#f6f6f6;padding:6px 8px;margin:4px 0}
`)
	for i, c := range tlPalette {
		fmt.Fprintf(&b, ".k%d{fill:%s}.t%d{fill:%s}\n", i, c[0], i, c[1])
	}
	return b.String()
}

// tlFill is the CSS class of client c's colour, and tlInk of text on it.
func tlFill(c int) string { return "k" + strconv.Itoa(max(c, 0)%len(tlPalette)) }
func tlInk(c int) string  { return "t" + strconv.Itoa(max(c, 0)%len(tlPalette)) }

// tlDefs are the hatchings the charts fill with.
const tlDefs = `<defs><pattern id="tlpause" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
	`<rect width="3" height="6" fill="#777" fill-opacity=".35"/></pattern>` +
	`<pattern id="tlwait" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">` +
	`<rect width="2" height="6" fill="#d62728" fill-opacity=".5"/></pattern>` +
	`<pattern id="tlover" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
	`<rect width="2" height="5" fill="#d62728" fill-opacity=".7"/></pattern></defs>` + "\n"

// writeOverview draws the whole run as a strip, a row per lane, with a
// box around the part the main chart shows.
func (p *tlPage) writeOverview(b *strings.Builder) {
	rows := p.n + len(p.nodes)
	const top = 9.0
	rowsH := float64(rows) * tlOverRowH
	sc := tlScale{from: 0, to: p.end, x0: tlPlotX, w: tlPlotW}
	fmt.Fprintf(b, "<p class=\"cap\">The whole run, 0s to %s; the box is the part drawn below, %s to %s:</p>\n", tlSecs(p.end), tlSecs(p.from), tlSecs(p.to))
	fmt.Fprintf(b, `<svg class="overview" width="%s" height="%s" role="img" aria-label="the whole run">`+"\n", tlF1(tlWidth), tlF1(top+rowsH+16))
	fmt.Fprintf(b, `<text class="ln" x="4" y="%s">whole run</text>`, tlF1(top+rowsH/2+4))
	tlRect(b, tlPlotX, top, tlPlotW, rowsH, "ovbg", "")
	for _, f := range p.fs {
		for _, li := range f.lanes {
			if f.to > f.from && li < rows {
				x1 := sc.x(f.from)
				tlRect(b, x1, top+float64(li)*tlOverRowH, max(sc.x(f.to)-x1, 1), tlOverRowH, "f "+f.class, "")
			}
		}
	}
	for c := range p.n {
		p.overviewHolds(b, sc, c, top+float64(c)*tlOverRowH)
	}
	for _, w := range p.waits {
		if p.valid(w.client) {
			x1 := sc.x(w.from)
			tlRect(b, x1, top+float64(w.client)*tlOverRowH, max(sc.x(w.to)-x1, 1), tlOverRowH, "reach", "")
		}
	}
	x1 := sc.x(p.from)
	tlRect(b, x1-1, top-2, max(sc.x(p.to)-x1, 1)+2, rowsH+4, "win", "the part drawn below")
	p.violationTicks(b, sc, top)
	tlAxis(b, sc, top+rowsH+13, 0)
	b.WriteString("</svg>\n")
}

// overviewHolds draws client c's holds in its overview row, those that
// touch as one.
func (p *tlPage) overviewHolds(b *strings.Builder, sc tlScale, c int, y float64) {
	var r tlRun
	flush := func() {
		if r.n > 0 {
			tlRect(b, r.x1, y, max(r.x2-r.x1, 1), tlOverRowH, tlFill(c), "")
		}
	}
	for i, hd := range p.holds[c] {
		to := max(hd.EndTime, hd.usedTo)
		x1, x2 := sc.x(hd.StartTime), sc.x(to)
		if !r.join(x1, x2, hd.StartTime, to, 1) {
			flush()
			r.start(x1, x2, hd.StartTime, to, i)
		}
	}
	flush()
}

// writeMain draws the main chart: the time axis, then a lane per client,
// per node and for the topology.
func (p *tlPage) writeMain(b *strings.Builder) {
	lanes, height := p.layout()
	sc := tlScale{from: p.from, to: p.to, x0: tlPlotX, w: tlPlotW}
	fmt.Fprintf(b, `<svg class="main" width="%s" height="%s" data-from="%d" data-to="%d" role="img" aria-label="the run's lanes over true time">`+"\n",
		tlF1(tlWidth), tlF1(height), p.from, p.to)
	b.WriteString(tlDefs)
	p.drawLanes(b, lanes, height)
	tlAxis(b, sc, 12, height-4)
	var labels tlLabels
	p.drawFaults(b, sc, lanes, &labels)
	p.drawOverlapBand(b, sc, height)
	p.drawItems(b, sc, lanes, &labels)
	p.drawWaits(b, sc, lanes, height, &labels)
	p.drawHolds(b, sc, lanes, &labels)
	p.drawOverlapLanes(b, sc, lanes, &labels)
	p.drawTries(b, sc, lanes)
	p.drawUses(b, sc, lanes, &labels)
	p.drawMarks(b, sc, lanes, &labels)
	p.violationTicks(b, sc, tlAxisH)
	labels.write(b, lanes)
	b.WriteString("</svg>\n")
}

// drawLanes draws the lanes' backgrounds and names: a client's with a
// swatch of its colour.
func (p *tlPage) drawLanes(b *strings.Builder, lanes []tlLane, height float64) {
	for i, l := range lanes {
		class := "lane" + strconv.Itoa(i%2)
		if l.client < 0 {
			class = "lanen"
		}
		tlRect(b, 0, l.y, tlWidth, l.h, class, "")
		x := 4.0
		if l.client >= 0 {
			tlRect(b, 4, l.y+l.h/2-4, 8, 8, tlFill(l.client), "")
			x = 16
		}
		fmt.Fprintf(b, `<text class="ln" x="%s" y="%s">%s</text>`, tlF1(x), tlF1(l.y+l.h/2+4), html.EscapeString(l.name))
		if i == p.n && i > 0 {
			tlLine(b, 0, l.y, tlWidth, l.y, "sep", "")
		}
	}
	tlLine(b, tlPlotX, tlAxisH, tlPlotX, height-4, "sep", "")
}

// tlAxis writes the time axis's labels at y, in seconds, at a round
// step, with grid lines down to gridTo (none when gridTo <= y).
func tlAxis(b *strings.Builder, sc tlScale, y, gridTo float64) {
	step := tlStep(sc.to - sc.from)
	dec := 0
	for s := int64(time.Second); step < s && dec < 9; s /= 10 {
		dec++
	}
	for t := (sc.from + step - 1) / step * step; t <= sc.to; t += step {
		x := sc.x(t)
		if gridTo > y {
			tlLine(b, x, tlAxisH, x, gridTo, "grid", "")
		}
		label := strconv.FormatFloat(float64(t)/1e9, 'f', dec, 64) + "s"
		fmt.Fprintf(b, `<text class="ax" x="%s" y="%s">%s</text>`, tlF1(x), tlF1(y), label)
	}
}

// tlStep is a round step (1, 2 or 5 times a power of ten ns) giving
// about ten ticks over span.
func tlStep(span int64) int64 {
	target := max(span/10, 1)
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if p*m >= target {
				return p * m
			}
		}
	}
}

// violationTicks marks every violation, the later ones too, with a red
// triangle whose tip is at y.
func (p *tlPage) violationTicks(b *strings.Builder, sc tlScale, y float64) {
	last := -10.0
	for _, x := range p.later {
		if x.Time < sc.from || x.Time > sc.to {
			continue
		}
		px := sc.x(x.Time)
		if px-last < 3 {
			continue
		}
		last = px
		fmt.Fprintf(b, `<path class="vm" d="M%s %sl-4 -7h8z"><title>%s</title></path>`, tlF1(px), tlF1(y), html.EscapeString(x.String()))
	}
}

// drawFaults shades each fault's span on its lanes, or draws a line at a
// fault that is an instant.
func (p *tlPage) drawFaults(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	for _, f := range p.fs {
		if !sc.shows(f.from, f.to) {
			continue
		}
		x1, x2 := sc.clampX(f.from), sc.clampX(f.to)
		for _, li := range f.lanes {
			if li < 0 || li >= len(lanes) {
				continue
			}
			l := lanes[li]
			if f.from == f.to {
				tlLine(b, x1, l.y+1, x1, l.y+l.h-1, "pt "+f.class, f.title)
			} else {
				tlRect(b, x1, l.y+1, max(x2-x1, 1), l.h-2, "f "+f.class, f.title)
			}
			switch {
			case f.text == "":
			case f.from == f.to:
				labels.add(li, x1+2, f.text, tlPrioFault, "")
			default:
				labels.addSpan(li, x1, x2, f.text, tlPrioFault, "")
			}
		}
	}
}

// overlapping reports whether the first mutual exclusion's overlap is
// known and shown, and where it is.
func (p *tlPage) overlapping(sc tlScale) (x1, x2 float64, ok bool) {
	if p.pair[0] < 0 || !sc.shows(p.over[0], p.over[1]) {
		return 0, 0, false
	}
	x1 = sc.clampX(p.over[0])
	return x1, max(sc.clampX(p.over[1]), x1+2), true
}

func (p *tlPage) overlapTitle() string {
	return fmt.Sprintf("%s and %s both believed they held the lock from %s to %s", clientName(p.h, p.pair[0]),
		clientName(p.h, p.pair[1]), tlSecs(p.over[0]), tlSecs(p.over[1]))
}

// drawOverlapBand shades the overlap of the first mutual exclusion
// across the chart, behind everything.
func (p *tlPage) drawOverlapBand(b *strings.Builder, sc tlScale, height float64) {
	if x1, x2, ok := p.overlapping(sc); ok {
		tlRect(b, x1, tlAxisH, x2-x1, height-4-tlAxisH, "overlap", p.overlapTitle())
	}
}

// drawOverlapLanes shades the overlap on both holders' bars, over them.
func (p *tlPage) drawOverlapLanes(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	x1, x2, ok := p.overlapping(sc)
	if !ok {
		return
	}
	for _, c := range p.pair {
		y, h := tlBarY(lanes[c])
		tlRect(b, x1, y-1, x2-x1, h+2, "ovl", p.overlapTitle())
	}
	text := "both hold the lock " + tlSecs(p.over[0]) + "–" + tlSecs(p.over[1])
	labels.add(p.pair[1], x1+2, text, tlPrioViolation, "v")
}

// drawHolds draws every client's holds in the window; holds too narrow
// to see one by one (but the violation's) as one mark per run of them.
func (p *tlPage) drawHolds(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	for c := range p.n {
		l := lanes[c]
		var r tlRun
		flush := func() {
			switch {
			case r.n == 1:
				p.drawHold(b, sc, l, &p.holds[c][r.first], labels)
			case r.n > 1:
				y, h := tlBarY(l)
				tlRect(b, r.x1, y, r.x2-r.x1, h, tlFill(c), fmt.Sprintf("%s: %d holds from %s to %s",
					clientName(p.h, c), r.n, tlSecs(r.from), tlSecs(r.to)))
			}
			r.n = 0
		}
		for i := range p.holds[c] {
			hd := &p.holds[c][i]
			to := max(hd.EndTime, hd.usedTo)
			if !sc.shows(hd.StartTime, to) {
				continue
			}
			x1, x2 := sc.clampX(hd.StartTime), sc.clampX(to)
			if !hd.hl && x2-x1 < 2 && r.join(x1, x2, hd.StartTime, to, 2) {
				continue
			}
			flush()
			r.start(x1, x2, hd.StartTime, to, i)
			if hd.hl || x2-x1 >= 2 {
				flush()
			}
		}
		flush()
	}
}

// drawHold draws one hold: a bar from its grant to the end of its belief,
// lighter on to its last access to the resource, named when it is wide.
func (p *tlPage) drawHold(b *strings.Builder, sc tlScale, l tlLane, hd *tlHold, labels *tlLabels) {
	y, h := tlBarY(l)
	name := clientName(p.h, hd.Client)
	x1, x2 := sc.clampX(hd.StartTime), sc.clampX(hd.EndTime)
	if hd.usedTo > hd.EndTime && sc.shows(hd.EndTime, hd.usedTo) {
		tlRect(b, x2, y, sc.clampX(hd.usedTo)-x2, h, tlFill(hd.Client)+" used",
			fmt.Sprintf("%s used the lock after its belief ended, until %s", name, tlSecs(hd.usedTo)))
	}
	if !sc.shows(hd.StartTime, hd.EndTime) {
		return
	}
	class := tlFill(hd.Client) + " hold"
	if hd.hl {
		class += " hl"
	}
	tlRect(b, x1, y, max(x2-x1, 1.5), h, class, p.holdTitle(hd))
	if text := tlHoldText(name, hd, x2-x1-6); text != "" {
		fmt.Fprintf(b, `<text class="%s" x="%s" y="%s">%s</text>`, tlInk(hd.Client), tlF1(x1+3), tlF1(y+h/2+3.5), html.EscapeString(text))
	}
	if hd.hl && hd.StartTime < sc.from {
		labels.add(hd.Client, sc.x0, "◀ holds since "+tlSecs(hd.StartTime), tlPrioViolation, "v")
	}
}

// tlHoldText is what fits in a hold's bar: its client, token and how it
// ended, or the client alone, or nothing.
func tlHoldText(name string, hd *tlHold, room float64) string {
	parts := []string{name}
	if hd.hasToken {
		parts = append(parts, "token "+strconv.FormatUint(hd.token, 10))
	}
	switch {
	case hd.Open:
		parts = append(parts, "held at the end")
	case hd.EndReason != "release":
		parts = append(parts, hd.EndReason)
	}
	for _, s := range []string{strings.Join(parts, " · "), name} {
		if tlTextWidth(s) <= room {
			return s
		}
	}
	return ""
}

// holdTitle is a hold's tooltip.
func (p *tlPage) holdTitle(hd *tlHold) string {
	end := "still believed when the run ended"
	if !hd.Open {
		end = "to " + tlSecs(hd.EndTime) + " (" + hd.EndReason + ")"
	}
	s := fmt.Sprintf("%s held the lock from %s %s", clientName(p.h, hd.Client), tlSecs(hd.StartTime), end)
	if hd.hasToken {
		s += fmt.Sprintf("; token %d", hd.token)
	}
	if hd.validUntil != 0 {
		s += "; valid to " + tlSecs(hd.validUntil)
	}
	if hd.uses > 0 {
		s += fmt.Sprintf("; %d accesses, the last at %s", hd.uses, tlSecs(hd.usedTo))
	}
	return s
}

// drawTries draws every client's failed attempts under its holds: each
// from its call to its return, those too narrow to see as one mark per
// run of them.
func (p *tlPage) drawTries(b *strings.Builder, sc tlScale, lanes []tlLane) {
	for c := range p.n {
		y, h := tlTriesY(lanes[c])
		name := clientName(p.h, c)
		var r tlRun
		flush := func() {
			if r.n == 0 {
				return
			}
			a := p.tries[c][r.first]
			class, title := "try", fmt.Sprintf("%s: acquire %s, called %s, returned %s", name, a.Outcome, tlSecs(a.CallTime), tlSecs(a.ReturnTime))
			if a.Outcome == model.Unknown {
				class, title = "try unk", fmt.Sprintf("%s: acquire called %s never returned", name, tlSecs(a.CallTime))
			}
			if r.n > 1 {
				class, title = "try", fmt.Sprintf("%s: %d failed attempts from %s to %s", name, r.n, tlSecs(r.from), tlSecs(r.to))
			}
			tlRect(b, r.x1, y, max(r.x2-r.x1-0.5, 1), h, class, title)
			r.n = 0
		}
		for i, a := range p.tries[c] {
			if !sc.shows(a.CallTime, a.ReturnTime) {
				continue
			}
			x1, x2 := sc.clampX(a.CallTime), sc.clampX(a.ReturnTime)
			if x2-x1 < 3 && r.join(x1, x2, a.CallTime, a.ReturnTime, 2) {
				continue
			}
			flush()
			r.start(x1, max(x2, x1+1.5), a.CallTime, a.ReturnTime, i)
			if x2-x1 >= 3 {
				flush()
			}
		}
		flush()
	}
}

// drawUses draws every client's accesses to the resource as ticks at the
// time they reached it: a write tall, a read short, a rejected one grey
// and dashed. A tick within 2 pixels of the last of its kind is dropped,
// and one within 4 of the last of any kind has no tooltip: where they are
// that dense, nobody points at one.
func (p *tlPage) drawUses(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	for c := range p.n {
		last, prev := [3]float64{-10, -10, -10}, -10.0
		for _, e := range p.uses[c] {
			if e.Time < sc.from || e.Time > sc.to {
				continue
			}
			x, k := sc.x(e.Time), 0
			switch {
			case !e.Accepted:
				k = 2
			case e.Kind == model.ResourceWrite:
				k = 1
			}
			_, hl := slices.BinarySearch(p.hlUse, e.Seq)
			if !hl && x-last[k] < 2 {
				continue
			}
			p.drawUse(b, sc, lanes[c], e, hl || x-prev >= 4, hl, labels)
			last[k], prev = x, x
		}
	}
}

// drawUse draws one access: its tick, where it was sent from when that
// is visibly earlier, and, when titled, its tooltip and its value as a
// label ("r3", "w4", "w4✗").
func (p *tlPage) drawUse(b *strings.Builder, sc tlScale, l tlLane, e model.Event, titled, hl bool, labels *tlLabels) {
	x := sc.x(e.Time)
	write := e.Kind == model.ResourceWrite
	y1, y2 := tlTickY(l, write)
	class, text := "r", "r"+strconv.FormatInt(e.Value, 10)
	if write {
		class, text = "w", "w"+strconv.FormatInt(e.Value, 10)
	}
	if !e.Accepted {
		class, text = "rej", "r✗"
		if write {
			text = "w" + strconv.FormatInt(e.Value, 10) + "✗"
		}
	}
	if s := tlSentOr(e); x-sc.clampX(s) >= 3 {
		tlLine(b, sc.clampX(s), y2-1, x, y2-1, "sent", "")
	}
	title := clientName(p.h, e.Client) + " " + eventText(e, nil) + " at " + tlSecs(e.Time)
	if s := tlSentOr(e); s < e.Time {
		title += ", sent at " + tlSecs(s)
	}
	if titled {
		tlLine(b, x, y1, x, y2, class, title)
	} else {
		tlLine(b, x, y1, x, y2, class, "")
	}
	switch {
	case hl:
		tlRect(b, x-3, y1-1.5, 6, y2-y1+3, "usehl", title)
		labels.add(l.client, x-3, text, tlPrioViolation, "v")
	case titled:
		labels.add(l.client, x-3, text, tlPrioAccess, "")
	}
}

// drawItems draws the lock items' stays on each node's lane as thin bars
// in their writer's colour (consecutive stays of one writer that touch as
// one), and the item a leftover violation is about outlined in red. The
// application's data is no lock item: tlLockItems leaves it out.
func (p *tlPage) drawItems(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	items := tlLockItems(p.h)
	slices.SortStableFunc(items, func(a, b model.ItemLife) int {
		return cmp.Or(tlCompareNodes(a.Node, b.Node), cmp.Compare(a.From, b.From))
	})
	var r tlRun
	lane := -1
	flush := func() {
		if r.n == 0 {
			return
		}
		it := items[r.first]
		y, h := tlItemY(lanes[lane])
		title := fmt.Sprintf("lock item of %s on %s, written by %s, from %s to %s", it.Owner, it.Node, clientName(p.h, it.Client), tlSecs(it.From), tlSecs(it.To))
		if r.n > 1 {
			title = fmt.Sprintf("%d stays of lock items of %s on %s, written by %s, from %s to %s", r.n, it.Owner, it.Node, clientName(p.h, it.Client), tlSecs(r.from), tlSecs(r.to))
		}
		tlRect(b, r.x1, y, max(r.x2-r.x1, 1), h, tlFill(it.Client)+" item", title)
		if text := "item " + it.Owner; r.x2-r.x1 >= tlTextWidth(text)+8 {
			labels.addSpan(lane, r.x1, r.x2-tlTextWidth(text), text, tlPrioEvent, "")
		}
		r.n = 0
	}
	for i, it := range items {
		li := p.nodeLane(it.Node)
		if li < 0 || !sc.shows(it.From, it.To) {
			continue
		}
		x1, x2 := sc.clampX(it.From), sc.clampX(it.To)
		if li == lane && items[r.first].Client == it.Client && r.join(x1, x2, it.From, it.To, 1) {
			continue
		}
		flush()
		lane = li
		r.start(x1, x2, it.From, it.To, i)
	}
	flush()
	p.drawLeft(b, sc, lanes, labels)
}

// drawLeft outlines the lock item of the first leftover violation.
func (p *tlPage) drawLeft(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	for _, lf := range p.left {
		li := p.nodeLane(lf.node)
		if li < 0 || !sc.shows(lf.from, lf.to) {
			continue
		}
		y, h := tlItemY(lanes[li])
		x1 := sc.clampX(lf.from)
		tlRect(b, x1, y-2, max(sc.clampX(lf.to)-x1, 2), h+4, "hlbox", "left behind unused from "+tlSecs(lf.from)+"; the liveness bound passed at "+tlSecs(lf.bound))
		labels.addSpan(li, x1, sc.clampX(lf.to), "left behind unused from "+tlSecs(lf.from), tlPrioViolation, "v")
	}
}

// drawWaits draws the first liveness violation's waits on the waiting
// clients' lanes: hatched while they waited, solid while a majority of
// the key's nodes was up and reachable from them (what counts), and a
// line where the wait passed the liveness bound.
func (p *tlPage) drawWaits(b *strings.Builder, sc tlScale, lanes []tlLane, height float64, labels *tlLabels) {
	for _, w := range p.waits {
		if !p.valid(w.client) || !sc.shows(w.from, w.to) {
			continue
		}
		y, h := tlBarY(lanes[w.client])
		name := clientName(p.h, w.client)
		x1 := sc.clampX(w.from)
		tlRect(b, x1, y, sc.clampX(w.to)-x1, h, "wait", fmt.Sprintf("%s waited for the lock from %s to %s, nobody holding it", name, tlSecs(w.from), tlSecs(w.to)))
		for _, c := range w.counted {
			if sc.shows(c[0], c[1]) {
				cx := sc.clampX(c[0])
				tlRect(b, cx, y+2, max(sc.clampX(c[1])-cx, 1), h-4, "reach",
					fmt.Sprintf("%s waiting with a majority of the key's nodes up and reachable, %s to %s", name, tlSecs(c[0]), tlSecs(c[1])))
			}
		}
		labels.addSpan(w.client, x1, sc.clampX(w.to), "waiting, nobody holds the lock", tlPrioViolation, "v")
	}
	if len(p.waits) == 0 || p.waits[0].bound < sc.from || p.waits[0].bound > sc.to {
		return
	}
	x := sc.x(p.waits[0].bound)
	tlLine(b, x, tlAxisH, x, height-4, "bound", "the wait passed the liveness bound at "+tlSecs(p.waits[0].bound))
	if c := p.waits[0].client; p.valid(c) {
		labels.add(c, x+3, "liveness bound passed "+tlSecs(p.waits[0].bound), tlPrioViolation, "v")
	}
}

// drawMarks draws what happens at an instant: clients stopping, the run's
// abort, the application's data destroyed.
func (p *tlPage) drawMarks(b *strings.Builder, sc tlScale, lanes []tlLane, labels *tlLabels) {
	for c := range p.n {
		y, h := tlBarY(lanes[c])
		for _, e := range p.stops[c] {
			if e.Time >= sc.from && e.Time <= sc.to {
				x := sc.x(e.Time)
				tlRect(b, x-2.5, y+h/2-2.5, 5, 5, "stop", clientName(p.h, c)+" stops at "+tlSecs(e.Time)+" ("+e.Reason+")")
				if !strings.HasPrefix(e.Reason, "run ended") {
					labels.add(c, x+3, "stops", tlPrioEvent, "")
				}
			}
		}
	}
	if a := p.h.Abort; a != nil && p.valid(a.Client) && a.Time >= sc.from && a.Time <= sc.to {
		y, h := tlBarY(lanes[a.Client])
		x := sc.x(a.Time)
		detail, _, _ := strings.Cut(a.Detail, "\n")
		tlRect(b, x-4, y+h/2-4, 8, 8, "abort", string(a.Kind)+" at "+tlSecs(a.Time)+": "+detail)
		labels.add(a.Client, x+5, string(a.Kind), tlPrioViolation, "v")
	}
	last := make([]float64, len(lanes)) // per lane: x of its last mark
	_, lost := p.v.First(model.DataLoss)
	for i, d := range p.h.DataLoss {
		li := p.nodeLane(d.Node)
		if li < 0 || d.Time < sc.from || d.Time > sc.to {
			continue
		}
		x := sc.x(d.Time)
		if last[li] > 0 && x-last[li] < 2 && i > 0 {
			continue
		}
		last[li] = x
		l := lanes[li]
		text := "data " + d.How + " by " + clientName(p.h, d.Client)
		tlLine(b, x, l.y+1, x, l.y+l.h-1, "lost", text+" ("+d.Key+") at "+tlSecs(d.Time))
		prio, class := tlPrioFault, ""
		if i == 0 && lost {
			prio, class = tlPrioViolation, "v"
		}
		labels.add(li, x+2, text, prio, class)
	}
}

// tlLegend explains the marks, in the flow of the page.
func tlLegend(b *strings.Builder) {
	items := [][2]string{
		{`<rect class="k0" x="1" y="2" width="24" height="8"/>`, "hold: grant to the end of the client's belief"},
		{`<rect class="k0 used" x="1" y="2" width="24" height="8"/>`, "used after its belief ended"},
		{`<rect class="try" x="1" y="5" width="24" height="3"/>`, "failed acquire attempt(s)"},
		{`<line class="r" x1="8" y1="6" x2="8" y2="11"/><line class="w" x1="16" y1="1" x2="16" y2="11"/>`, "read, write at the resource"},
		{`<line class="rej" x1="12" y1="1" x2="12" y2="11"/>`, "access rejected (stale token)"},
		{`<rect class="k0 hold hl" x="1" y="2" width="24" height="8"/><rect class="ovl" x="12" y="1" width="13" height="10"/>`, "the two holds of the mutual exclusion, their overlap"},
		{`<line class="w" x1="12" y1="1" x2="12" y2="11"/><rect class="usehl" x="9" y="0" width="6" height="12"/>`, "accesses of the lost update"},
		{`<rect class="wait" x="1" y="2" width="24" height="8"/><rect class="reach" x="8" y="3" width="17" height="6"/>`, "waiting, nobody holding; solid: a majority reachable"},
		{`<rect class="f pause" x="1" y="0" width="24" height="12"/>`, "paused"},
		{`<rect class="f down" x="1" y="0" width="24" height="12"/>`, "node down"},
		{`<rect class="f clog" x="1" y="0" width="24" height="12"/>`, "clogged"},
		{`<rect class="f part" x="1" y="0" width="24" height="12"/>`, "partitioned"},
		{`<line class="pt jump" x1="12" y1="0" x2="12" y2="12"/>`, "clock jump"},
		{`<line class="pt restart" x1="12" y1="0" x2="12" y2="12"/>`, "restart"},
		{`<rect class="k1 item" x="1" y="4" width="24" height="4"/>`, "lock item on a node, its writer's colour"},
		{`<line class="pt topo" x1="12" y1="0" x2="12" y2="12"/>`, "topology change"},
		{`<path class="vm" d="M12 11l-4 -7h8z"/>`, "violation"},
	}
	b.WriteString(`<div class="legend">`)
	for _, it := range items {
		fmt.Fprintf(b, `<span><svg width="26" height="12">%s</svg>%s</span>`, it[0], html.EscapeString(it[1]))
	}
	b.WriteString("</div>\n")
}

// writeNotes writes, under the chart, what it shows and what it does
// not: the window, the steady faults, every violation, why nobody got
// the lock, and how the run ended.
func (p *tlPage) writeNotes(b *strings.Builder) {
	esc := html.EscapeString
	b.WriteString("<div class=\"notes\">\n")
	shown := fmt.Sprintf("Drawn: %s to %s of the run's %s, in true time", tlSecs(p.from), tlSecs(p.to), tlSecs(p.end))
	if p.zoomed {
		shown += ", around the first violation (the strip at the top is the whole run)"
	}
	fmt.Fprintf(b, "<p>%s. Marks too close to tell apart are drawn as one; hover over a mark for its details.</p>\n", shown)
	if steady := steadyFaults(p.plan); len(steady) > 0 {
		fmt.Fprintf(b, "<p>All through the run: %s.</p>\n", esc(strings.Join(steady, ", ")))
	}
	if len(p.v.Violations) > 0 {
		b.WriteString("<p>Violations, the first of each kind:</p>\n<ul>\n")
		for _, x := range p.v.Violations {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(violationText(p.h, x)+" (at "+tlSecs(x.Time)+")"))
		}
		b.WriteString("</ul>\n")
		if n := len(p.v.Later); n > 0 {
			fmt.Fprintf(b, "<p>and %d later ones, marked on the time axes.</p>\n", n)
		}
	}
	if p.why != "" {
		fmt.Fprintf(b, "<p><b>Why nobody got the lock:</b> %s.</p>\n", esc(p.why))
	}
	fmt.Fprintf(b, "<p>%s: %s.</p>\n", esc(tlSecs(p.h.End)), esc(runEnd(p.h)))
	if note := p.v.UnsupportedNote(); note != "" {
		fmt.Fprintf(b, "<p>%s</p>\n", esc(note))
	}
	b.WriteString("</div>\n")
}

// writeRequests writes, for a run of unmodified code, the text timeline
// around the first violation with each request the clients it names sent
// the nodes and the reply (TimelineOptions.Requests): why the library
// believed what it did.
func (p *tlPage) writeRequests(b *strings.Builder, trace []model.TraceEvent) {
	if len(trace) == 0 || len(p.v.Violations) == 0 {
		return
	}
	var t strings.Builder
	if err := Timeline(&t, p.h, p.plan, p.v, TimelineOptions{Around: 2 * time.Second, MaxLines: 60, Requests: trace}); err != nil {
		return
	}
	b.WriteString("<div class=\"notes\">\n<p><b>What each node was asked and answered</b>, around the first violation: the requests of the clients it names, each with its reply, beside the clients' own lines.</p>\n<pre class=\"requests\">")
	b.WriteString(html.EscapeString(t.String()))
	b.WriteString("</pre>\n</div>\n")
}
