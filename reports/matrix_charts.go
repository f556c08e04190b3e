package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-analyze/charts"
)

// Chart sizes in SVG units, close to the CSS pixels they take on the page
// so that their text keeps its size: two small charts side by side, the
// violation-rate chart across the page.
const (
	chartWidth     = 620
	wideChartWidth = 1280
)

// Bar charts whose largest value is this many times their smallest (of
// those above zero), or more, draw their value axis on a log scale: on a
// linear one the small values are hairlines.
const logScaleRatio = 20

// Two series (p50 and p99) in colours told apart at a glance, and by
// readers who do not see red and green apart: blue and orange.
var seriesColours = []string{"#4e79a7", "#f28e2b"}

// matrixChart is one chart of the HTML report, rendered as inline SVG.
type matrixChart struct {
	Title string
	Note  string // how to read it, under the title
	Wide  bool
	SVG   template.HTML
}

// barSpec is one bar chart of the report: per variant, one bar per series.
type barSpec struct {
	title  string
	series []string    // names, when more than one
	values [][]float64 // per series, per variant
	max    float64     // of the value axis; 0: from the data
	unit   string      // after each bar's value, e.g. "%"
}

// matrixCharts draws the report's charts from the matrix: the rate of
// seeds with a bug per variant and class, as a grid of numbers shaded by
// their value, and the metrics as horizontal bars (the variants' names
// read level, each bar labelled with its value).
func matrixCharts(m Matrix) ([]matrixChart, error) {
	variants := make([]string, len(m.Rows))
	p50, p99 := make([]float64, len(m.Rows)), make([]float64, len(m.Rows))
	avail, msgs := make([]float64, len(m.Rows)), make([]float64, len(m.Rows))
	grants := make([]float64, len(m.Rows))
	for i, r := range m.Rows {
		variants[i] = r.Variant
		p50[i], p99[i] = r.Metrics.AcquireP50ms, r.Metrics.AcquireP99ms
		avail[i], msgs[i] = 100*r.Metrics.Availability, r.Metrics.MessagesPerGrant
		grants[i] = r.Metrics.GrantsPerMinute
	}
	out := []matrixChart{{
		Title: "Seeds with a bug (%), per variant and fault class",
		Note:  "Darker: more of the cell's seeds broke a promise inside the envelope. – not run · n/a: the envelope assumes the class away.",
		Wide:  true,
		SVG:   template.HTML(rateGridSVG(m, wideChartWidth)),
	}}
	for _, s := range []barSpec{
		{title: "Acquire latency (ms)", series: []string{"p50", "p99"}, values: [][]float64{p50, p99}},
		{title: "Availability (% of time the lock was held)", values: [][]float64{avail}, max: 100, unit: "%"},
		{title: "Grants per minute", values: [][]float64{grants}},
		{title: "Messages per grant", values: [][]float64{msgs}},
	} {
		svg, log, err := barChartSVG(s, variants, chartWidth)
		if err != nil {
			return nil, fmt.Errorf("chart %q: %w", s.title, err)
		}
		c := matrixChart{Title: s.title, SVG: template.HTML(svg)}
		if log {
			c.Note = "Log scale: each grid line is ten times the one before."
		}
		out = append(out, c)
	}
	return out, nil
}

// barChartSVG draws a horizontal bar chart, the variants top to bottom in
// the matrix's order, and returns it as an SVG element and whether its
// value axis is a log scale.
func barChartSVG(s barSpec, variants []string, width int) ([]byte, bool, error) {
	n := len(variants)
	labels := make([]string, n)
	for i, v := range variants {
		labels[n-1-i] = v // the library draws the first category at the bottom
	}
	lo, hi, log, largest := logRange(s.values)
	log = log && s.max == 0
	values := make([][]float64, len(s.values))
	for i, vs := range s.values {
		values[i] = make([]float64, n)
		for j, v := range vs {
			if log {
				v = math.Log10(max(v, math.Pow(10, lo)))
			}
			values[i][n-1-j] = v
		}
	}
	opt := charts.NewBarChartOptionWithData(values)
	opt.Horizontal = true
	opt.Theme = charts.GetTheme(charts.ThemeLight).WithSeriesColors(parseColours(seriesColours))
	opt.Padding = charts.Box{Top: 8, Right: 56, Bottom: 8, Left: 8}
	opt.CategoryAxis = charts.CategoryAxisOption{Labels: labels, LabelFontStyle: charts.NewFontStyleWithSize(13)}
	opt.ValueAxis = []charts.ValueAxisOption{valueAxis(s.max, largest, lo, hi, log)}
	opt.SeriesLabelPosition = "right"
	for i := range opt.SeriesList {
		opt.SeriesList[i].Label = charts.SeriesLabel{Show: charts.Ptr(true), FontStyle: charts.NewFontStyleWithSize(12),
			LabelFormatter: barLabels(s.unit, lo, log)}
	}
	height := 48 + n*(13*len(s.values)+12)
	if len(s.series) > 1 {
		opt.Legend = charts.LegendOption{SeriesNames: s.series, FontStyle: charts.NewFontStyleWithSize(13)}
		height += 28
	}
	p := charts.NewPainter(charts.PainterOptions{OutputFormat: charts.ChartOutputSVG, Width: width, Height: height})
	if err := p.BarChart(opt); err != nil {
		return nil, false, err
	}
	svg, err := p.Bytes()
	if err != nil {
		return nil, false, err
	}
	// Drop an XML declaration, if any: the SVG is inlined in HTML.
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		svg = svg[i:]
	}
	return svg, log, nil
}

// valueAxis is the bar chart's value axis: from 0 to top (or to a round
// number above the largest value), or on a log scale from 10^lo to 10^hi,
// a grid line per power of ten.
func valueAxis(top, largest, lo, hi float64, log bool) charts.ValueAxisOption {
	axis := charts.ValueAxisOption{Min: charts.Ptr(0.0), LabelFontStyle: charts.NewFontStyleWithSize(12),
		PreferNiceIntervals: charts.Ptr(false)}
	if log {
		axis.Min, axis.Max, axis.LabelCount = charts.Ptr(lo), charts.Ptr(hi), int(hi-lo)+1
		axis.ValueFormatter = func(v float64) string { return powerOfTen(int(math.Round(v))) }
		return axis
	}
	if top <= 0 {
		top = largest
	}
	top, labels := roundAxis(top)
	axis.Max, axis.LabelCount = charts.Ptr(top), labels
	axis.ValueFormatter = axisNumber
	return axis
}

// roundAxis is a linear axis from 0 to at least largest in steps of 1, 2,
// 2.5 or 5 times a power of ten, with at most six labels, which never run
// into one another: the axis' top and its number of labels.
func roundAxis(largest float64) (top float64, labels int) {
	if largest <= 0 {
		return 1, 2
	}
	base := math.Pow(10, math.Floor(math.Log10(largest/5)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step := m * base
		if n := math.Ceil(largest/step - 1e-9); n <= 5 {
			return n * step, int(n) + 1
		}
	}
	return 10 * base * 5, 6 // not reached: largest/base is below 50
}

// barLabels labels each bar with its value, not its logarithm on a log
// scale (where a value at the axis' lower end is one of zero or less:
// logRange puts that end below every value above zero).
func barLabels(unit string, lo float64, log bool) charts.SeriesLabelFormatter {
	return func(_ int, _ string, v float64) (string, *charts.LabelStyle) {
		switch {
		case log && v <= lo:
			v = 0
		case log:
			v = math.Pow(10, v)
		}
		return chartNumber(v) + unit, nil
	}
}

// logRange is the powers of ten a log scale of the values spans: from the
// one below the smallest value above zero to the one at or above the
// largest; whether the values span enough to need it; and the largest.
func logRange(values [][]float64) (lo, hi float64, log bool, largest float64) {
	smallest := math.Inf(1)
	for _, vs := range values {
		for _, v := range vs {
			if v > 0 {
				smallest, largest = min(smallest, v), max(largest, v)
			}
		}
	}
	if largest == 0 {
		return 0, 1, false, 0
	}
	lo, hi = math.Ceil(math.Log10(smallest))-1, math.Ceil(math.Log10(largest))
	return lo, max(hi, lo+1), largest >= logScaleRatio*smallest, largest
}

// chartNumber writes a chart's value with the digits that matter:
// "12,013", "248", "57.8", "2.5", "0.25".
func chartNumber(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return Thousands(int(math.Round(v)))
	case a >= 100 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// axisNumber writes a linear axis' label: "0", "2.5", "20", "1,000".
func axisNumber(v float64) string {
	if v >= 1000 {
		return Thousands(int(math.Round(v)))
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// powerOfTen writes 10^k short, for a log axis: "0.01", "1", "100",
// "10k", "1M".
func powerOfTen(k int) string {
	switch {
	case k < 0:
		return strconv.FormatFloat(math.Pow(10, float64(k)), 'f', -k, 64)
	case k < 3:
		return strconv.Itoa(int(math.Pow(10, float64(k))))
	case k < 6:
		return strconv.Itoa(int(math.Pow(10, float64(k-3)))) + "k"
	}
	return strconv.Itoa(int(math.Pow(10, float64(k-6)))) + "M"
}

// gridNumber writes a rate in percent for the rate grid: whole percents,
// but never 0 or 100 for a rate that is neither, "0.5" rather than "1".
func gridNumber(rate float64) string {
	r := math.Round(rate)
	if r == rate || (rate >= 1 && rate < 99) {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(rate, 'f', 1, 64)
}

// parseColours turns "#rrggbb" colours into the chart library's.
func parseColours(hex []string) []charts.Color {
	out := make([]charts.Color, len(hex))
	for i, h := range hex {
		out[i] = charts.ColorFromHex(h)
	}
	return out
}

// Geometry of the rate grid, in SVG units.
const (
	gridRowHeight = 26
	gridCharWidth = 8 // of a 13px label, a little wide: a name never runs into the grid
)

// rateGridSVG draws the rate of seeds with a bug of every cell as a grid,
// a row per variant and a column per class, each cell its percentage on a
// white-to-red shade of it: the matrix's shape at a glance, every number
// written where it is.
func rateGridSVG(m Matrix, width int) string {
	nameWidth := 0
	for _, r := range m.Rows {
		nameWidth = max(nameWidth, utf8.RuneCountInString(r.Variant)*gridCharWidth+16)
	}
	cols := max(len(m.Classes), 1)
	colWidth := float64(width-nameWidth) / float64(cols)
	longest := 0
	for _, c := range m.Classes {
		longest = max(longest, utf8.RuneCountInString(string(c)))
	}
	// Column heads read level when they fit their column, else at -40°.
	rotate, head := float64(longest*7) > colWidth-6, 28
	if rotate {
		head = int(float64(longest*7)*0.65) + 24
	}
	height := head + len(m.Rows)*gridRowHeight + 2
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="system-ui, sans-serif" font-size="13">`,
		width, height, width, height)
	for j, c := range m.Classes {
		x := float64(nameWidth) + (float64(j)+0.5)*colWidth
		if rotate {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" transform="rotate(-40 %.1f %d)" fill="#3d4555">%s</text>`,
				x-4, head-8, x-4, head-8, template.HTMLEscapeString(string(c)))
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#3d4555">%s</text>`, x, head-10, template.HTMLEscapeString(string(c)))
		}
	}
	for i, r := range m.Rows {
		y := head + i*gridRowHeight
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" font-weight="600" fill="#1d2330">%s</text>`,
			nameWidth-8, y+gridRowHeight/2+5, template.HTMLEscapeString(r.Variant))
		for j, c := range r.Cells {
			if j < cols {
				gridCell(&b, r.Variant, c, float64(nameWidth)+float64(j)*colWidth, y, colWidth)
			}
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// gridCell draws one cell of the rate grid, with its counts as a tooltip.
func gridCell(b *strings.Builder, variant string, c Cell, x float64, y int, w float64) {
	text, fill, ink := "–", "#eef0f3", "#8a93a3"
	title := variant + " × " + string(c.Class) + ": not run"
	switch {
	case c.Excluded != "":
		text, title = "n/a", variant+" × "+string(c.Class)+": assumes no "+c.Excluded
	case c.Seeds > 0:
		rate := 100 * float64(c.Violations) / float64(c.Seeds)
		text, fill, ink = gridNumber(rate), rateShade(rate), "#1d2330"
		if rate >= 50 {
			ink = "#fff"
		}
		title = fmt.Sprintf("%s × %s: %d of %d seeds with a bug", variant, c.Class, c.Violations, c.Seeds)
	}
	fmt.Fprintf(b, `<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="#fff" stroke-width="2"/>`+
		`<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text></g>`,
		template.HTMLEscapeString(title), x, y, w, gridRowHeight, fill, x+w/2, y+gridRowHeight/2+5, ink, text)
}

// rateShade is the colour of a rate from 0 to 100%: a pale green for none,
// then from a pale to a deep red, by the square root of the rate so that
// a few seeds in two hundred already show.
func rateShade(rate float64) string {
	if rate <= 0 {
		return "#e3f4e8"
	}
	f := math.Sqrt(min(rate, 100) / 100)
	from, to := [3]float64{0xfd, 0xe2, 0xdc}, [3]float64{0xa8, 0x1c, 0x1c}
	var rgb [3]int
	for i := range rgb {
		rgb[i] = int(math.Round(from[i] + f*(to[i]-from[i])))
	}
	return fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
}
