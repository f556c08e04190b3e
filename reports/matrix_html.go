package reports

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// htmlCell is one matrix cell as the HTML page shows it.
type htmlCell struct {
	Head   string // "✗ 12/200"
	Detail string // "M+U · first @3 · size 2"
	Class  string // CSS class for the status colour
	Link   string
	Title  string // tooltip: the replay command
	Note   int    // replay footnote number, 0: none
}

// htmlReplay is one line of the replay table.
type htmlReplay struct {
	Note           int
	Variant, Class string
	Command        string
}

// htmlRow is one variant's line as the HTML page shows it.
type htmlRow struct {
	Row
	View  []htmlCell
	Costs []htmlCell
}

// htmlPage is everything the page template reads.
type htmlPage struct {
	Matrix
	Rows    []htmlRow
	Replays []htmlReplay
	Charts  []matrixChart
	// ReplaySummary says what Replays are: "6 replay commands, one for
	// each of 5 failing cells and 1 assumption whose breach broke a promise".
	ReplaySummary string
}

// statusClass names the CSS class that colours a cell of each status.
var statusClass = map[Status]string{NotRun: "notrun", Safe: "safe", LivenessOnly: "live", LockOnly: "lock", Unsafe: "unsafe"}

// HTML writes the matrix as a self-contained page for reading: the matrix
// with coloured cells linking to each failing cell's porcupine HTML, the
// cost table coloured as the matrix is, the variants, charts (inline SVG:
// the rate of seeds with a bug per cell as a shaded grid of numbers, and
// horizontal bars, each labelled with its value, of acquire latency on a
// log scale when it spans orders of magnitude, availability, grants per
// minute and messages per grant) and the replay commands. The output is
// deterministic.
func HTML(w io.Writer, m Matrix) error {
	chartList, err := matrixCharts(m)
	if err != nil {
		return err
	}
	page := htmlPage{Matrix: m, Charts: chartList}
	cells := 0
	for _, r := range m.Rows {
		hr := htmlRow{Row: r}
		for _, c := range r.Cells {
			hc := htmlCellOf(c)
			if c.Violations > 0 && c.Replay != "" {
				hc.Note = len(page.Replays) + 1
				page.Replays = append(page.Replays, htmlReplay{hc.Note, r.Variant, string(c.Class), c.Replay})
				cells++
			}
			hr.View = append(hr.View, hc)
		}
		page.Rows = append(page.Rows, hr)
	}
	for i, r := range m.Rows {
		for _, c := range r.Costs {
			hc := htmlCostOf(c)
			if c.Expected > 0 && c.Replay != "" {
				hc.Note = len(page.Replays) + 1
				page.Replays = append(page.Replays, htmlReplay{hc.Note, r.Variant, "beyond " + c.Assumption, c.Replay})
			}
			page.Rows[i].Costs = append(page.Rows[i].Costs, hc)
		}
	}
	page.ReplaySummary = replaySummary(cells, len(page.Replays)-cells)
	return pageTemplate.Execute(w, page)
}

// replaySummary says what the replay table lists, every count true:
// "1 replay command, for 1 failing cell", "6 replay commands, one for
// each of 5 failing cells and 1 assumption whose breach broke a promise".
func replaySummary(cells, costs int) string {
	var what []string
	if cells > 0 {
		what = append(what, Plural(cells, "failing cell"))
	}
	if costs > 0 {
		what = append(what, Plural(costs, "assumption")+" whose breach broke a promise")
	}
	if cells+costs == 1 {
		return "1 replay command, for " + what[0]
	}
	return Plural(cells+costs, "replay command") + ", one for each of " + strings.Join(what, " and ")
}

// htmlCostOf shows a cost: expected seeds over broken ones, marked and
// coloured as the matrix marks and colours a cell by what broke (here
// after the breach): red a lost update or an abort, orange beliefs that
// overlapped with the resource safe, yellow liveness only, green nothing;
// grey when the variant makes no such assumption or no seed broke it.
func htmlCostOf(c Cost) htmlCell {
	if !c.Assumed {
		return htmlCell{Head: "–", Class: "notrun"}
	}
	hc := htmlCell{Head: fmt.Sprintf("✓ %d/%d", c.Expected, c.Broke), Class: "safe", Title: c.Replay}
	switch k := c.Kinds; {
	case c.Expected == 0 && c.Broke == 0:
		hc.Head, hc.Class, hc.Detail = fmt.Sprintf("%d/%d", c.Expected, c.Broke), "notrun", "no seed broke it"
	case c.Expected == 0:
	case !k.ResourceSafe() || k.Aborted > 0:
		hc.Class = statusClass[Unsafe]
	case !k.LockSafe():
		hc.Class = statusClass[LockOnly]
	default:
		hc.Class = statusClass[LivenessOnly]
	}
	if c.Expected > 0 {
		mark := "✗"
		if hc.Class == statusClass[LivenessOnly] {
			mark = "⚠"
		}
		hc.Head = fmt.Sprintf("%s %d/%d", mark, c.Expected, c.Broke)
		hc.Detail = fmt.Sprintf("%s\u00a0@%d", kindLetters(c.Kinds), c.SeedsToFirst)
	}
	if c.Bugs > 0 {
		hc.Detail = strings.TrimPrefix(hc.Detail+fmt.Sprintf(" · bugs\u00a0%d", c.Bugs), " · ")
	}
	return hc
}

// htmlCellOf splits a cell's text into a head and a detail line, so that
// twelve columns fit a screen.
func htmlCellOf(c Cell) htmlCell {
	hc := htmlCell{Class: statusClass[c.Status()], Link: c.HTMLLink, Title: c.Replay}
	switch c.Status() {
	case NotRun:
		hc.Head = "–"
		return hc
	case Safe:
		hc.Head = fmt.Sprintf("✓ 0/%d", c.Seeds)
		hc.Detail = "<" + percent(upperBound95(c.Seeds)) + cellNotes(c)
		if c.Excluded != "" {
			hc.Head, hc.Class, hc.Detail = "n/a", "notrun", "assumes no "+c.Excluded
		}
		return hc
	case LivenessOnly:
		hc.Head = fmt.Sprintf("⚠ %d/%d", c.Violations, c.Seeds)
	default:
		hc.Head = fmt.Sprintf("✗ %d/%d", c.Violations, c.Seeds)
	}
	// No-break spaces keep "M+U @3" and "size 2" whole when the line wraps.
	hc.Detail = fmt.Sprintf("%s\u00a0@%d", kindLetters(c.Kinds), c.SeedsToFirst)
	if c.MinimalSize >= 0 {
		hc.Detail += fmt.Sprintf(" size\u00a0%d", c.MinimalSize)
	}
	hc.Detail += cellNotes(c)
	return hc
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"percent": func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"fixed":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"plural":  Plural,
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>locksim: variants × fault classes</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; margin: 2rem auto; max-width: 1440px; padding: 0 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2.2rem; border-bottom: 1px solid #dde1e8; padding-bottom: .3rem; }
.sub { color: #5b6475; margin-top: 0; }
table { border-collapse: collapse; }
th, td { padding: .45rem .6rem; border: 1px solid #dde1e8; text-align: left; vertical-align: top; }
th { background: #f3f5f8; font-weight: 600; }
.matrix { overflow-x: auto; }
.matrix th, .matrix td { padding: .3rem .28rem; font-size: .86rem; }
.matrix td.cell { font-variant-numeric: tabular-nums; font-size: .82rem; }
.matrix td.cell .head { font-weight: 600; white-space: nowrap; }
.matrix td.cell .detail { display: block; font-size: .74rem; color: #3d4555; }
.matrix td.cell a { color: inherit; text-decoration: underline dotted; }
.variant { font-weight: 600; white-space: nowrap; }
.safe { background: #dcf3e2; } .live { background: #fff1b8; } .lock { background: #ffd9a8; }
.unsafe { background: #f7c4c4; } .notrun { background: #eef0f3; color: #8a93a3; }
.legend span { display: inline-block; padding: .1rem .5rem; margin: 0 .4rem .3rem 0; border-radius: 3px; font-size: .9rem; }
sup { color: #5b6475; }
code { font: 13px ui-monospace, "SFMono-Regular", Menlo, monospace; background: #f3f5f8; padding: .1rem .3rem; border-radius: 3px; }
table.replays td { padding: .2rem .6rem; }
summary { cursor: pointer; color: #3d4555; margin-bottom: .6rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 1.2rem; }
.chart { border: 1px solid #dde1e8; border-radius: 4px; padding: .6rem; margin: 0; }
.chart.wide { grid-column: 1 / -1; }
.chart h3 { font-size: 1rem; margin: 0 0 .2rem; }
.chart .note { font-size: .82rem; color: #5b6475; margin: 0 0 .4rem; }
.sub span { padding: 0 .3rem; border-radius: 3px; white-space: nowrap; }
.chart svg { width: 100%; height: auto; display: block; }
</style>
</head>
<body>
<h1>locksim: {{plural (len .Rows) "variant"}} × {{plural (len .Classes) "fault class"}}</h1>
<p class="sub">{{plural .Seeds "seed"}} per cell, each drawn inside the variant's envelope (its assumptions, up to their edges); a cell counts bugs: violations of what the variant promises. A cell links to the timeline page of its first failing seed (and from there to porcupine's linearizability check); hover it for the replay command.</p>

<p class="legend">
<span class="safe">✓ no bug (&lt;p%: the rate 95% confidence rules out)</span><span class="lock">✗ beliefs overlapped, resource safe</span><span class="unsafe">✗ lost update or abort</span><span class="live">⚠ liveness only</span><span class="notrun">– not run · n/a: the envelope assumes the class away</span><br>
kinds: <b>M</b> mutual exclusion (lock level) · <b>U</b> lost update or data destroyed (resource level) · <b>L</b> liveness (waiters starved, items left behind) · <b>A</b> abort (panic or livelock) · <b>@i</b>: first failure at the i-th seed · <b>size s</b>: timed faults left after minimising · <b>not promised k</b>: seeds that broke only what the variant does not promise · <b>outside k</b>: seeds that broke an assumption anyway
</p>

<div class="matrix">
<table>
<tr><th>variant</th>{{range .Classes}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td class="variant">{{.Variant}}</td>{{range .View}}<td class="cell {{.Class}}"{{if .Title}} title="{{.Title}}"{{end}}><span class="head">{{if .Link}}<a href="{{.Link}}">{{.Head}}</a>{{else}}{{.Head}}{{end}}</span>{{if .Detail}}<span class="detail">{{.Detail}}</span>{{end}}</td>{{end}}</tr>
{{end}}</table>
</div>
{{if .CostSeeds}}
<h2>What breaking each assumption costs</h2>
<p class="sub">Per variant and assumption it makes, {{plural .CostSeeds "seed"}} drawn to break that one assumption (faults of every class, every other assumption kept): seeds in which a promised property broke after it, of the seeds whose run really broke it. Marks and colours as in the matrix, by what broke after the breach (expected there, not a bug): <span class="unsafe">✗ a lost update or abort</span> <span class="lock">✗ beliefs overlapped only</span> <span class="live">⚠ liveness only</span> <span class="safe">✓ nothing broke</span> <span class="notrun">– not assumed, or no seed broke it</span>; <b>bugs k</b>: seeds that broke a promise before any breach.</p>
<div class="matrix">
<table>
<tr><th>variant</th>{{range .Assumptions}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td class="variant">{{.Variant}}</td>{{range .Costs}}<td class="cell {{.Class}}"{{if .Title}} title="{{.Title}}"{{end}}><span class="head">{{.Head}}</span>{{if .Detail}}<span class="detail">{{.Detail}}</span>{{end}}</td>{{end}}</tr>
{{end}}</table>
</div>
{{end}}
<h2>Variants</h2>
<table>
<tr><th>variant</th><th>what it changes</th><th>envelope</th></tr>
{{range .Rows}}<tr><td class="variant">{{.Variant}}</td><td>{{.Summary}}</td><td>{{or .Envelope "–"}}</td></tr>
{{end}}</table>

<h2>Metrics</h2>
<table>
<tr><th>variant</th><th>grants/min</th><th>acquire p50 (ms)</th><th>acquire p99 (ms)</th><th>availability</th><th>messages/grant</th></tr>
{{range .Rows}}<tr><td class="variant">{{.Variant}}</td><td class="num">{{fixed .Metrics.GrantsPerMinute}}</td><td class="num">{{fixed .Metrics.AcquireP50ms}}</td><td class="num">{{fixed .Metrics.AcquireP99ms}}</td><td class="num">{{percent .Metrics.Availability}}</td><td class="num">{{fixed .Metrics.MessagesPerGrant}}</td></tr>
{{end}}</table>

<h2 id="charts">Charts</h2>
<div class="charts">
{{range .Charts}}<figure class="chart{{if .Wide}} wide{{end}}"><h3>{{.Title}}</h3>{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{.SVG}}</figure>
{{end}}</div>
{{if .Replays}}
<h2>Replay</h2>
<details><summary>{{.ReplaySummary}} (also in each cell's tooltip)</summary>
<table class="replays">
<tr><th>#</th><th>variant</th><th>class</th><th>command</th></tr>
{{range .Replays}}<tr><td class="num">{{.Note}}</td><td class="variant">{{.Variant}}</td><td>{{.Class}}</td><td><code>{{.Command}}</code></td></tr>
{{end}}</table>
</details>
{{end}}
</body>
</html>
`
