package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"unicode/utf8"

	"github.com/go-analyze/charts"
)

// Chart sizes in SVG units, close to the CSS pixels they take on the page
// so that their text keeps its size: two small charts side by side, the
// violation-rate chart across the page.
const (
	chartWidth     = 620
	wideChartWidth = 1280
	chartHeight    = 320
)

// matrixChart is one chart of the HTML report, rendered as inline SVG.
type matrixChart struct {
	Title string
	Wide  bool
	SVG   template.HTML
}

// matrixCharts draws the report's charts from the matrix.
func matrixCharts(m Matrix) ([]matrixChart, error) {
	variants := make([]string, len(m.Rows))
	for i, r := range m.Rows {
		variants[i] = r.Variant
	}
	classes := make([]string, len(m.Classes))
	for i, c := range m.Classes {
		classes[i] = string(c)
	}
	rates := make([][]float64, len(m.Rows))
	p50, p99 := make([]float64, len(m.Rows)), make([]float64, len(m.Rows))
	avail, msgs := make([]float64, len(m.Rows)), make([]float64, len(m.Rows))
	grants := make([]float64, len(m.Rows))
	for i, r := range m.Rows {
		rates[i] = make([]float64, len(m.Classes))
		for j, c := range r.Cells {
			if j < len(rates[i]) && c.Seeds > 0 {
				rates[i][j] = 100 * float64(c.Violations) / float64(c.Seeds)
			}
		}
		p50[i], p99[i] = r.Metrics.AcquireP50ms, r.Metrics.AcquireP99ms
		avail[i], msgs[i] = 100*r.Metrics.Availability, r.Metrics.MessagesPerGrant
		grants[i] = r.Metrics.GrantsPerMinute
	}
	specs := []struct {
		title  string
		wide   bool
		values [][]float64
		labels []string
		series []string
		max    float64 // of the value axis; 0: from the data
	}{
		{"Seeds with a violation (%), per fault class", true, rates, classes, variants, 0},
		{"Acquire latency (ms)", false, [][]float64{p50, p99}, variants, []string{"p50", "p99"}, 0},
		{"Availability (% of time the lock was held)", false, [][]float64{avail}, variants, nil, 100},
		{"Grants per minute", false, [][]float64{grants}, variants, nil, 0},
		{"Messages per grant", false, [][]float64{msgs}, variants, nil, 0},
	}
	out := make([]matrixChart, 0, len(specs))
	for _, s := range specs {
		width := chartWidth
		if s.wide {
			width = wideChartWidth
		}
		svg, err := barChartSVG(s.values, s.labels, s.series, s.max, width, chartHeight)
		if err != nil {
			return nil, fmt.Errorf("chart %q: %w", s.title, err)
		}
		out = append(out, matrixChart{Title: s.title, Wide: s.wide, SVG: template.HTML(svg)})
	}
	return out, nil
}

// barChartSVG draws a grouped bar chart: one group per label, one bar per
// series, the value axis from 0 (to max when > 0), and returns it as an SVG
// element.
func barChartSVG(values [][]float64, labels, series []string, max float64, width, height int) ([]byte, error) {
	yAxis := charts.YAxisOption{Min: charts.Ptr(0.0)}
	if max > 0 {
		// Six labels: 0, 20, … 100 rather than 11.11, 22.22, …
		yAxis.Max, yAxis.LabelCount = charts.Ptr(max), 6
	}
	opts := []charts.OptionFunc{
		charts.SVGOutputOptionFunc(),
		charts.DimensionsOptionFunc(width, height),
		// Every label shown: the library would skip some to avoid collisions,
		// and a bar group without its name cannot be read.
		charts.XAxisOptionFunc(charts.XAxisOption{Labels: labels, LabelCount: len(labels),
			LabelFontStyle: charts.FontStyle{FontSize: 13}, LabelRotation: labelRotation(labels, width)}),
		charts.YAxisOptionFunc(yAxis),
		charts.PaddingOptionFunc(charts.Box{Top: 16, Right: 16, Bottom: 16, Left: 16}),
	}
	if len(series) > 0 {
		opts = append(opts, charts.LegendOptionFunc(charts.LegendOption{SeriesNames: series}))
	}
	p, err := charts.BarRender(values, opts...)
	if err != nil {
		return nil, err
	}
	svg, err := p.Bytes()
	if err != nil {
		return nil, err
	}
	// Drop an XML declaration, if any: the SVG is inlined in HTML.
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		svg = svg[i:]
	}
	return svg, nil
}

// labelRotation tilts the category labels when the longest would not fit
// its slot level (about 9px a character at 13px, with a margin).
func labelRotation(labels []string, width int) float64 {
	longest := 0
	for _, l := range labels {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	if len(labels) == 0 || longest*9 < (width-80)/len(labels) {
		return 0
	}
	return charts.DegreesToRadians(-30)
}
