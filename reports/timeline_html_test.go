package reports

import (
	"bytes"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

func tlPageOf(t *testing.T, h model.History, plan faults.Plan, v model.Verdict, info PageInfo) string {
	t.Helper()
	var b bytes.Buffer
	if err := TimelinePage(&b, h, plan, v, info); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tlMainChart is the main chart's SVG of a page.
func tlMainChart(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<svg class="main"`)
	if i < 0 {
		t.Fatalf("no main chart in:\n%s", page)
	}
	j := strings.Index(page[i:], "</svg>")
	return page[i : i+j]
}

var tlPausedInfo = PageInfo{Variant: "original", Seed: 7, Replay: "locksim replay -variant original -seed 7",
	Back: "../index.html", Porcupine: "seed-7-porcupine.html"}

func TestTimelinePageGolden(t *testing.T) {
	h, plan, v := pausedHolder()
	golden(t, "timeline_page_paused_holder.golden", []byte(tlPageOf(t, h, plan, v, tlPausedInfo)))
}

// A mutual exclusion's page has both clients' lanes, the two holds in red,
// their overlap shaded and named, and says how to replay the run.
func TestTimelinePageMutualExclusion(t *testing.T) {
	h, plan, v := pausedHolder()
	page := tlPageOf(t, h, plan, v, tlPausedInfo)
	chart := tlMainChart(t, page)
	for _, want := range []string{
		`>h0/t0</text>`, `>h1/t0</text>`,
		`<title>h0/t0 and h1/t0 both believed they held the lock from 62.015s to 72.600s</title>`,
		`>both hold the lock 62.015s–72.600s</text>`,
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("main chart lacks %q", want)
		}
	}
	held := regexp.MustCompile(`class="k\d hold hl"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(chart, -1)
	if len(held) != 2 || !strings.HasPrefix(held[0][1], "h0/t0 held the lock from 1.012s") ||
		!strings.HasPrefix(held[1][1], "h1/t0 held the lock from 62.015s") {
		t.Errorf("highlighted holds: %q", held)
	}
	tlLabelsDoNotOverlap(t, chart)
	x, w := tlRectOf(t, chart, "overlap")
	if x < tlPlotX || x+w > tlPlotX+tlPlotW || w < 100 {
		t.Errorf("the overlap is drawn at x %.1f, %.1f wide: not well inside the chart", x, w)
	}
	for _, want := range []string{
		"<title>locksim timeline: original, seed 7</title>",
		`<p class="v">mutual-exclusion at 62.015s: h1/t0 was granted the lock at 62.015s while h0/t0, paused, still believed it held it</p>`,
		"replay: <code>locksim replay -variant original -seed 7</code>",
		`<a href="../index.html">back to the matrix</a>`, `<a href="seed-7-porcupine.html">linearizability check (porcupine)</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// tlRectOf is the x and width of the first rect of class in svg.
func tlRectOf(t *testing.T, svg, class string) (x, w float64) {
	t.Helper()
	m := regexp.MustCompile(`<rect class="` + class + `" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no rect of class %q", class)
	}
	x, _ = strconv.ParseFloat(m[1], 64)
	w, _ = strconv.ParseFloat(m[2], 64)
	return x, w
}

func TestTimelinePageInfo(t *testing.T) {
	h, plan, v := pausedHolder()
	page := tlPageOf(t, h, plan, v, PageInfo{Variant: "fix-<x>", Seed: 3, Violation: "said <here>"})
	for _, want := range []string{"<title>locksim timeline: fix-&lt;x&gt;, seed 3</title>", `<p class="v">said &lt;here&gt;</p>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, unwanted := range []string{"porcupine", "replay:", ">back<", "position:fixed", "position:absolute", "position:sticky", "<script", "http"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("page has %q", unwanted)
		}
	}
}

// tlLongRun is a 600s run whose first violation, a mutual exclusion at
// 300.5s between h1/t0 and h0/t1, is over in a second; h0/t0 waits and
// is denied all along.
func tlLongRun() (model.History, model.Verdict) {
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0", Host: "h0"}, {Name: "h0/t1", Host: "h0"}, {Name: "h1/t0", Host: "h1"}},
		End:     sec(600), TTL: 10 * time.Second,
	}
	var seq uint64
	add := func(t int64, c int, k model.Kind, f func(*model.Event)) {
		seq++
		e := model.Event{Seq: seq, Time: t, Client: c, Kind: k}
		if f != nil {
			f(&e)
		}
		h.Events = append(h.Events, e)
	}
	granted := func(e *model.Event) { e.Granted = true }
	for i := int64(0); i < 3000; i++ {
		at := i * sec(0.2)
		add(at, 0, model.AcquireCall, nil)
		add(at+sec(0.05), 0, model.AcquireReturn, nil)
		if i%2 == 0 { // h0/t1 holds for 0.1s every 0.4s
			add(at+sec(0.06), 1, model.AcquireReturn, granted)
			add(at+sec(0.07), 1, model.ResourceRead, func(e *model.Event) { e.Accepted, e.Value = true, i })
			add(at+sec(0.16), 1, model.BeliefEnd, func(e *model.Event) { e.Reason = "release" })
		}
	}
	add(sec(300.5), 2, model.AcquireReturn, granted)
	add(sec(300.6), 2, model.BeliefEnd, func(e *model.Event) { e.Reason = "release" })
	tlSortEvents(h.Events)
	v := model.Verdict{Violations: []model.Violation{{Kind: model.MutualExclusion, Time: sec(300.5), Clients: []int{1, 2}, Story: "s"}}}
	if x, ok := model.FirstOverlap(h); ok {
		v.Violations[0] = x
	}
	return h, v
}

// tlSortEvents orders events by time and renumbers their Seqs.
func tlSortEvents(ev []model.Event) {
	for i := 1; i < len(ev); i++ {
		for j := i; j > 0 && ev[j].Time < ev[j-1].Time; j-- {
			ev[j], ev[j-1] = ev[j-1], ev[j]
		}
	}
	for i := range ev {
		ev[i].Seq = uint64(i + 1)
	}
}

// In a long run the main chart is zoomed on the first violation, under a
// strip of the whole run, and the page stays small.
func TestTimelinePageZoomsOnTheViolation(t *testing.T) {
	h, v := tlLongRun()
	if len(v.Violations) == 0 || v.Violations[0].Time != sec(300.5) {
		t.Fatalf("the fixture's first overlap: %v", v.Violations)
	}
	page := tlPageOf(t, h, faults.Plan{}, v, PageInfo{})
	m := regexp.MustCompile(`<svg class="main"[^>]* data-from="(\d+)" data-to="(\d+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no window on the main chart")
	}
	from, _ := strconv.ParseInt(m[1], 10, 64)
	to, _ := strconv.ParseInt(m[2], 10, 64)
	if from > sec(300.5) || to < sec(300.6) || to-from > sec(10) {
		t.Errorf("main chart shows %s to %s, want a few seconds around 300.5s", tlSecs(from), tlSecs(to))
	}
	if !strings.Contains(page, `<svg class="overview"`) || !strings.Contains(page, "the box is the part drawn below, "+tlSecs(from)) {
		t.Error("a zoomed page has no overview of the whole run")
	}
	x, w := tlRectOf(t, tlMainChart(t, page), "overlap")
	if x < tlPlotX || x+w > tlPlotX+tlPlotW || w < 20 {
		t.Errorf("the overlap is drawn at x %.1f, %.1f wide", x, w)
	}
	if len(page) > 2<<20 {
		t.Errorf("a %d-event history makes a page of %d bytes", len(h.Events), len(page))
	}
	tlLabelsDoNotOverlap(t, tlMainChart(t, page))
}

// Across the whole long run, a mark a pixel wide stands for many denied
// attempts: no more are drawn than the chart has pixels.
func TestTimelinePageAggregatesMarks(t *testing.T) {
	h, _ := tlLongRun()
	page := tlPageOf(t, h, faults.Plan{}, model.Verdict{}, PageInfo{})
	chart := tlMainChart(t, page)
	if n := strings.Count(chart, `<rect class="try"`); n == 0 || n > int(tlPlotW) {
		t.Errorf("%d marks for 3000 denied attempts", n)
	}
	if !strings.Contains(chart, " failed attempts from ") {
		t.Error("no mark says how many attempts it stands for")
	}
	if strings.Contains(page, `<svg class="overview"`) {
		t.Error("a page showing the whole run has an overview too")
	}
	tlLabelsDoNotOverlap(t, chart)
}

// tlLabelsDoNotOverlap checks that no two labels of a row overlap, by the
// width the page estimates for them.
func tlLabelsDoNotOverlap(t *testing.T, svg string) {
	t.Helper()
	rows := map[string][][2]float64{}
	for _, m := range regexp.MustCompile(`<text class="lbl[^"]*" x="([\d.]+)" y="([\d.]+)">([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		span := [2]float64{x, x + tlTextWidth(html.UnescapeString(m[3]))}
		for _, s := range rows[m[2]] {
			if span[0] < s[1] && s[0] < span[1] {
				t.Errorf("label %q at x %.1f, y %s overlaps another at %.1f–%.1f", m[3], x, m[2], s[0], s[1])
			}
		}
		rows[m[2]] = append(rows[m[2]], span)
	}
}

// A lost update's four accesses, the two reads of the same value and the
// two writes, are highlighted.
func TestTimelinePageLostUpdate(t *testing.T) {
	h, plan, v := pausedHolder()
	v.Violations = v.Violations[1:] // the lost update alone
	chart := tlMainChart(t, tlPageOf(t, h, plan, v, PageInfo{}))
	marked := regexp.MustCompile(`<rect class="usehl"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(chart, -1)
	var got []string
	for _, m := range marked {
		got = append(got, m[1])
	}
	want := []string{"h0/t0 read 0 at 2.000s", "h0/t0 write 1 at 72.500s", "h1/t0 read 0 at 62.100s", "h1/t0 write 1 at 62.200s"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("highlighted accesses:\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(chart, " hl\"") {
		t.Error("holds highlighted for a lost update")
	}
}

// tlStuckWaiter is a history whose h1/t0 waits in vain for a lock h0/t0
// took and left behind when it stopped, with the application's data on
// the third node.
func tlStuckWaiter() model.History {
	h := model.History{
		Clients:  []model.Client{{Name: "h0/t0", Host: "h0"}, {Name: "h1/t0", Host: "h1"}},
		End:      sec(100),
		TTL:      10 * time.Second,
		Replicas: 3, Reachable: true,
		Reach: []model.Reach{{Client: 1, From: 0, To: sec(50)}, {Client: 1, From: sec(70), To: sec(100)}},
		Items: []model.ItemLife{
			{Node: "n0", Owner: "h0", Key: "k_lock", Client: 0, From: sec(1), To: sec(100)},
			{Node: "n1", Owner: "h0", Key: "k_lock", Client: 0, From: sec(1), To: sec(100)},
			{Node: "n2", Owner: "appdata-owner", Key: "k_lock", App: true, Client: 1, From: 0, To: sec(100)},
		},
	}
	seq := uint64(0)
	add := func(t float64, c int, k model.Kind, granted bool) {
		seq++
		h.Events = append(h.Events, model.Event{Seq: seq, Time: sec(t), Client: c, Kind: k, Granted: granted})
	}
	add(1, 0, model.AcquireCall, false)
	add(1.01, 0, model.AcquireReturn, true)
	add(2, 0, model.ClientStop, false)
	for t := 3.0; t < 99; t += 2 {
		add(t, 1, model.AcquireCall, false)
		add(t+0.5, 1, model.AcquireReturn, false)
	}
	return h
}

// A liveness failure shows the starving client's wait, solid where a
// majority was reachable, where it passed the bound, and why nobody got
// the lock; the chart is zoomed on the wait up to the bound, so the
// second stretch with a majority reachable (from 70s) is in the overview
// only.
func TestTimelinePageLiveness(t *testing.T) {
	h := tlStuckWaiter()
	v := model.Check(h, model.DefaultCheckOptions())
	x, ok := v.First(model.Liveness)
	if !ok || x.Time != sec(3) || x.End != sec(33) {
		t.Fatalf("the fixture's verdict: %v", v)
	}
	why, _ := model.ExplainWait(h, x)
	page := tlPageOf(t, h, faults.Plan{}, v, PageInfo{})
	chart := tlMainChart(t, page)
	for _, want := range []string{
		"<title>h1/t0 waited for the lock from 3.000s to 100.000s, nobody holding it</title>",
		"<title>h1/t0 waiting with a majority of the key&#39;s nodes up and reachable, 3.000s to 50.000s</title>",
		">waiting, nobody holds the lock</text>", ">liveness bound passed 33.000s</text>",
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("main chart lacks %q", want)
		}
	}
	if n := strings.Count(chart, `<rect class="wait"`); n != 1 {
		t.Errorf("%d waits drawn, want h1/t0's", n)
	}
	if !strings.Contains(page, "<b>Why nobody got the lock:</b> "+html.EscapeString(why.String())) {
		t.Errorf("page lacks the explanation %q", why)
	}
}

// The application's data is never drawn as a lock item.
func TestTimelinePageLeavesAppDataOut(t *testing.T) {
	h := tlStuckWaiter()
	chart := tlMainChart(t, tlPageOf(t, h, faults.Plan{}, model.Check(h, model.DefaultCheckOptions()), PageInfo{}))
	items := regexp.MustCompile(`<rect class="k\d item"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(chart, -1)
	if len(items) != 2 || !strings.Contains(items[0][1], "on n0") || !strings.Contains(items[1][1], "on n1") {
		t.Errorf("lock items drawn: %q", items)
	}
	if strings.Contains(chart, "appdata-owner") {
		t.Error("the application's data is drawn as a lock item")
	}
}

// A hold is drawn to the end of its belief, and on, lighter, to the last
// access its holder made with it.
func TestTimelinePageHoldRunsToItsLastAccess(t *testing.T) {
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0"}},
		Events: []model.Event{
			{Seq: 1, Time: sec(1), Kind: model.AcquireReturn, Granted: true, HasToken: true, Token: 3, ValidUntilTrue: sec(61)},
			{Seq: 2, Time: sec(61), Kind: model.BeliefEnd, Reason: "expired"},
			{Seq: 3, Time: sec(65), Kind: model.ResourceWrite, HasToken: true, Token: 3, Value: 6, Sent: sec(60)},
		},
		End: sec(70),
	}
	chart := tlMainChart(t, tlPageOf(t, h, faults.Plan{}, model.Verdict{}, PageInfo{}))
	for _, want := range []string{
		"<title>h0/t0 held the lock from 1.000s to 61.000s (expired); token 3; valid to 61.000s; 1 accesses, the last at 65.000s</title>",
		"<title>h0/t0 used the lock after its belief ended, until 65.000s</title>",
		"<title>h0/t0 write 6 (rejected: stale token 3) at 65.000s, sent at 60.000s</title>",
		">w6✗</text>", "h0/t0 · token 3 · expired",
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("main chart lacks %q", want)
		}
	}
	x1, w1 := tlRectOf(t, chart, "k0 hold")
	x2, _ := tlRectOf(t, chart, "k0 used")
	if x2 < x1+w1-0.5 || x2 > x1+w1+0.5 {
		t.Errorf("the lighter part starts at %.1f, not where the belief ends (%.1f)", x2, x1+w1)
	}
}

// Faults are drawn on the lanes they act on, labelled as the text
// timeline says them.
func TestTimelinePageFaults(t *testing.T) {
	h, plan, v := pausedHolder()
	h.Restarts = []model.Restart{{Node: 1, Time: sec(60), Empty: true}}
	chart := tlMainChart(t, tlPageOf(t, h, plan, v, PageInfo{}))
	for _, want := range []string{
		`>n0</text>`, `>n1</text>`, `>n3</text>`, `>topology</text>`,
		"<title>crash n1 for 30s (wipe), at 30.000s</title>", "<title>pause h0/t0 for 70s, at 2.500s</title>",
		"<title>partition {n0,h1} one-way for 20s, at 40.000s</title>", "<title>n1 restarts at 60.000s</title>",
		"<title>topology → n3,n4,n0, at 50.000s</title>",
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("main chart lacks %q", want)
		}
	}
	// The partition takes node n0 and host h1's client h1/t0 (lane 1): two
	// shadings.
	if n := strings.Count(chart, "<title>partition {n0,h1} one-way for 20s, at 40.000s</title>"); n != 2 {
		t.Errorf("the partition is drawn on %d lanes, want n0 and h1/t0", n)
	}
}

func TestTimelinePageIsDeterministic(t *testing.T) {
	h, plan, v := pausedHolder()
	a := tlPageOf(t, h, plan, v, tlPausedInfo)
	for range 5 {
		if b := tlPageOf(t, h, plan, v, tlPausedInfo); b != a {
			t.Fatal("two renderings of one run differ")
		}
	}
	w := tlStuckWaiter()
	wv := model.Check(w, model.DefaultCheckOptions())
	if tlPageOf(t, w, faults.Plan{}, wv, PageInfo{}) != tlPageOf(t, w, faults.Plan{}, wv, PageInfo{}) {
		t.Fatal("two renderings of one liveness failure differ")
	}
}

func TestNiceStep(t *testing.T) {
	for span, want := range map[int64]int64{sec(600): sec(100), sec(1): sec(0.1), sec(90): sec(10), sec(3.3): sec(0.5), 7: 1} {
		if got := tlStep(span); got != want {
			t.Errorf("niceStep(%d) = %d, want %d", span, got, want)
		}
	}
}

// When the earlier holder's grant is far before the overlap, the chart is
// zoomed on the overlap and says since when the earlier hold runs.
func TestTimelinePageEarlierHoldRunsInFromTheLeft(t *testing.T) {
	h, plan, v := pausedHolder()
	h.End = sec(600)
	page := tlPageOf(t, h, plan, v, PageInfo{})
	chart := tlMainChart(t, page)
	if !strings.Contains(chart, ">◀ holds since 1.012s</text>") || !strings.Contains(page, `<svg class="overview"`) {
		t.Errorf("a zoomed chart does not say when the earlier hold began:\n%s", chart)
	}
	if n := strings.Count(chart, ` hold hl"`); n != 2 {
		t.Errorf("%d holds highlighted", n)
	}
}

// A leftover violation's item is outlined on its node; the application's
// data destroyed is marked where it was.
func TestTimelinePageLeftoverAndDataLoss(t *testing.T) {
	h := tlStuckWaiter()
	h.LongItems = h.Items[:2]
	h.DataLoss = []model.DataLost{{Node: "n2", Key: "k_lock", Time: sec(20), Client: 1, How: "removed"}}
	v := model.Check(h, model.DefaultCheckOptions())
	if x, ok := v.First(model.Leftover); !ok || x.Time != sec(2) {
		t.Fatalf("the fixture's verdict: %v", v)
	}
	chart := tlMainChart(t, tlPageOf(t, h, faults.Plan{}, v, PageInfo{}))
	for _, want := range []string{
		`<rect class="hlbox"`, "<title>left behind unused from 2.000s; the liveness bound passed at 32.000s</title>",
		"<title>data removed by h1/t0 (k_lock) at 20.000s</title>",
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("main chart lacks %q", want)
		}
	}
	// Both in the violations' red.
	for _, label := range []string{"left behind unused from 2.000s", "data removed by h1/t0"} {
		if !regexp.MustCompile(`<text class="lbl v" x="[\d.]+" y="[\d.]+">` + label + `</text>`).MatchString(chart) {
			t.Errorf("main chart has no red label %q", label)
		}
	}
}

// A run that aborted shows where, on the client's lane.
func TestTimelinePageAbort(t *testing.T) {
	h, plan, _ := pausedHolder()
	h.Abort = &model.Abort{Kind: model.Panic, Client: 1, Time: sec(62.1), Detail: "boom\nstack"}
	v := model.Verdict{Violations: []model.Violation{{Kind: model.Panic, Time: sec(62.1), Clients: []int{1}, Story: "h1/t0 panicked"}}}
	chart := tlMainChart(t, tlPageOf(t, h, plan, v, PageInfo{}))
	if !strings.Contains(chart, "<title>panic at 62.100s: boom</title>") || !strings.Contains(chart, ">panic</text>") {
		t.Error("the abort is not marked")
	}
}

// Labels that would collide are moved along their span or dropped: five
// clogs of a node a second apart (and its crash), and accesses a few
// pixels apart.
func TestTimelinePageLabelsDoNotOverlap(t *testing.T) {
	h, plan, v := pausedHolder()
	for i := range 5 {
		plan.Events = append(plan.Events, faults.Event{At: time.Duration(20+i) * time.Second, Kind: faults.Clog, Node: 1, For: 30 * time.Second})
	}
	for i := range 20 {
		h.Events = append(h.Events, model.Event{Seq: uint64(100 + i), Time: sec(80 + 0.3*float64(i)), Client: 1, Kind: model.ResourceRead, Accepted: true, Value: int64(i)})
	}
	chart := tlMainChart(t, tlPageOf(t, h, plan, v, PageInfo{}))
	tlLabelsDoNotOverlap(t, chart)
	// At its own start only the first clog's label fits; slid along their
	// spans, past it and the crash's, more do (not all five: the last ones'
	// spans end first).
	if n := strings.Count(chart, ">clog n1 for 30s</text>"); n < 2 || !strings.Contains(chart, ">crash n1 for 30s (wipe)</text>") {
		t.Errorf("%d of 5 overlapping clogs' labels shown, or not the crash's: none slid along its span", n)
	}
}

// A real-code run's page shows what each node was asked and answered
// around the first violation, escaped; a run without a trace shows none.
func TestTimelinePageShowsTheRequests(t *testing.T) {
	h, plan, v := pausedHolder()
	trace := []model.TraceEvent{{Time: sec(62.010), What: `n0 <- h1/t0: set lock "<v>" px 8000 nx => OK`}}
	page := tlPageOf(t, h, plan, v, PageInfo{Requests: trace})
	if !strings.Contains(page, "What each node was asked and answered") || !strings.Contains(page, "← h1/t0: set lock &#34;&lt;v&gt;&#34; px 8000 nx =&gt; OK") {
		t.Fatalf("the page does not show the request, escaped:\n%s", page)
	}
	if strings.Contains(tlPageOf(t, h, plan, v, PageInfo{}), "What each node was asked") {
		t.Fatal("a page without a trace shows a requests section")
	}
}
