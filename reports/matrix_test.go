package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, sampleMatrix()); err != nil {
		t.Fatal(err)
	}
	golden(t, "matrix.md.golden", b.Bytes())
}

func TestCellText(t *testing.T) {
	m := sampleMatrix()
	for _, tc := range []struct {
		row, col int
		want     string
	}{
		{0, 0, "✗ 4/200 M (first @3, size 1)"},
		{0, 1, "✗ 12/200 M+U (first @3, size 2) · outside 1"},
		{0, 3, "✗ 99/200 M+U (first @3, size 2)"},
		{1, 0, "✓ 0/200 (<1.5%)"},
		{1, 3, "✓ 0/200 (<1.5%) · not promised 50"},
		{2, 2, "⚠ 5/200 L (first @3, size 1)"},
		{2, 3, "n/a: assumes no pauses"},
	} {
		if got := cellText(m.Rows[tc.row].Cells[tc.col]); got != tc.want {
			t.Errorf("cell (%d,%d) = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
	if got := cellText(NewCell(faults.ClassAll)); got != "–" {
		t.Errorf("a cell never run reads %q", got)
	}
}

func TestCellRecord(t *testing.T) {
	c := NewCell(faults.ClassCrash)
	c.Record(10, Run{})
	c.Record(11, Run{Bugs: []model.ViolationKind{model.MutualExclusion, model.MutualExclusion}})
	c.Record(12, Run{Bugs: []model.ViolationKind{model.Panic, model.LostUpdate}, Outside: true})
	c.Record(13, Run{Unpromised: true, Expected: []model.ViolationKind{model.LostUpdate}})
	c.Record(14, Run{Unpromised: true})
	want := Kinds{MutualExclusion: 1, LostUpdate: 1, Aborted: 1}
	if c.Seeds != 5 || c.Violations != 2 || c.Kinds != want || c.FirstSeed != 11 || c.SeedsToFirst != 2 {
		t.Errorf("cell after 5 seeds: %+v", c)
	}
	// A seed counts as not promised only when that is all it broke; one
	// outside counts whatever it broke.
	if c.Unpromised != 1 || c.Outside != 1 {
		t.Errorf("cell after 5 seeds: unpromised %d, outside %d; want 1 and 1", c.Unpromised, c.Outside)
	}
	if c.Kinds.LockSafe() || c.Kinds.ResourceSafe() || !c.Kinds.LivenessOK() {
		t.Errorf("kinds %+v: wrong safety summary", c.Kinds)
	}
}

func TestCellStatus(t *testing.T) {
	for _, tc := range []struct {
		c    Cell
		want Status
	}{
		{NewCell(faults.ClassNone), NotRun},
		{Cell{Seeds: 5}, Safe},
		{Cell{Seeds: 5, Violations: 1, Kinds: Kinds{Liveness: 1}}, LivenessOnly},
		{Cell{Seeds: 5, Violations: 1, Kinds: Kinds{MutualExclusion: 1}}, LockOnly},
		{Cell{Seeds: 5, Violations: 1, Kinds: Kinds{MutualExclusion: 1, LostUpdate: 1}}, Unsafe},
		{Cell{Seeds: 5, Violations: 1, Kinds: Kinds{Aborted: 1}}, Unsafe},
	} {
		if got := tc.c.Status(); got != tc.want {
			t.Errorf("%+v: status %d, want %d", tc.c, got, tc.want)
		}
	}
}

func TestMarkdownEscapesPipes(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, sampleMatrix()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `| lease\|quorum |`) {
		t.Errorf("variant name with a pipe not escaped:\n%s", b.String())
	}
}

func TestJSONRoundTrips(t *testing.T) {
	m := sampleMatrix()
	var b bytes.Buffer
	if err := JSON(&b, m); err != nil {
		t.Fatal(err)
	}
	var back Matrix
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := JSON(&again, back); err != nil {
		t.Fatal(err)
	}
	if again.String() != b.String() {
		t.Errorf("JSON does not round-trip:\n%s\nvs\n%s", b.String(), again.String())
	}
	if !strings.Contains(b.String(), `"first_seed": -1`) {
		t.Errorf("JSON lacks a cell without failures")
	}
}

func TestHTMLHasMatrixAndCharts(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, sampleMatrix()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<table>", `<td class="cell unsafe"`, `<td class="cell lock"`, `<td class="cell live"`, `<td class="cell safe"`,
		`<a href="porcupine/original-pause-2.html">✗ 99/200</a>`, "M&#43;U\u00a0@3 size\u00a02",
		"lease|quorum", "<svg", "Acquire latency (ms)", "locksim replay -variant lease|quorum -class partition -seed 2",
		"What breaking each assumption costs", "10/45", "locksim replay -variant fenced -seed 3 -beyond token-checks",
		"not promised 50", ">n/a<", "assumes no pauses",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 5 {
		t.Errorf("HTML has %d charts, want 5", n)
	}
	var again bytes.Buffer
	if err := HTML(&again, sampleMatrix()); err != nil {
		t.Fatal(err)
	}
	if again.String() != page {
		t.Error("HTML is not deterministic")
	}
}

func TestCostText(t *testing.T) {
	m := sampleMatrix()
	for _, tc := range []struct {
		row, col int
		want     string
	}{
		{0, 0, "–"},
		{1, 1, "10/45 U (first @3)"},
		{2, 0, "0/50"},
	} {
		if got := costText(m.Rows[tc.row].Costs[tc.col]); got != tc.want {
			t.Errorf("cost (%d,%d) = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
}

// The 95% bound of a clean cell never claims more than its seeds show: it
// rounds up, and a handful of seeds rule out nothing.
func TestUpperBound(t *testing.T) {
	for n, want := range map[int]string{1: "100%", 3: "100%", 8: "38%", 30: "10%", 200: "1.5%", 1000: "0.30%", 20000: "0.02%"} {
		if got := percent(upperBound95(n)); got != want {
			t.Errorf("%d clean seeds: <%s, want <%s", n, got, want)
		}
	}
}

// The replay table's summary counts what it lists, in the singular when
// there is one.
func TestReplaySummary(t *testing.T) {
	for _, tc := range []struct {
		cells, costs int
		want         string
	}{
		{1, 0, "1 replay command, for 1 failing cell"},
		{0, 1, "1 replay command, for 1 assumption whose breach broke a promise"},
		{10, 0, "10 replay commands, one for each of 10 failing cells"},
		{5, 1, "6 replay commands, one for each of 5 failing cells and 1 assumption whose breach broke a promise"},
		{1, 3, "4 replay commands, one for each of 1 failing cell and 3 assumptions whose breach broke a promise"},
	} {
		if got := replaySummary(tc.cells, tc.costs); got != tc.want {
			t.Errorf("replaySummary(%d, %d) = %q, want %q", tc.cells, tc.costs, got, tc.want)
		}
	}
}

// A page with one failing cell says one command, not one per cell of a
// count that includes the costs' commands.
func TestHTMLCountsReplays(t *testing.T) {
	m := sampleMatrix()
	m.Rows = m.Rows[2:] // lease|quorum: one failing cell, no expected cost
	var b bytes.Buffer
	if err := HTML(&b, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<summary>1 replay command, for 1 failing cell (also", "locksim: 1 variant × 4 fault classes"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	b.Reset()
	if err := HTML(&b, sampleMatrix()); err != nil {
		t.Fatal(err)
	}
	if want := "6 replay commands, one for each of 5 failing cells and 1 assumption whose breach broke a promise"; !strings.Contains(b.String(), want) {
		t.Errorf("HTML lacks %q", want)
	}
}

// A cost is coloured as its legend says, by what broke after the breach.
func TestHTMLCostColoursFollowKinds(t *testing.T) {
	m := wideMatrix()
	cost := func(variant, assumption string) Cost {
		for _, r := range m.Rows {
			for _, c := range r.Costs {
				if r.Variant == variant && c.Assumption == assumption {
					return c
				}
			}
		}
		t.Fatalf("no cost %s × %s", variant, assumption)
		return Cost{}
	}
	for _, tc := range []struct {
		variant, assumption string
		head, class         string
	}{
		{"redlock", "restart-quarantine", "✗ 1/178", "lock"},   // M only: beliefs overlapped
		{"fenced", "token-checks", "✗ 127/200", "unsafe"},      // U
		{"corrected", "clock-rate", "✗ 17/200", "unsafe"},      // M+U
		{"fenced", "message-loss", "⚠ 76/200", "live"},         // L only
		{"fenced", "clock-error", "✓ 0/200", "safe"},           // nothing broke
		{"fenced", "clock-rate", "0/0", "notrun"},              // no seed broke it
		{"original", "clock-rate", "–", "notrun"},              // not assumed
		{"etcd-fenced", "durable-nodes", "✗ 12/200", "unsafe"}, // U+L
	} {
		got := htmlCostOf(cost(tc.variant, tc.assumption))
		if got.Head != tc.head || got.Class != tc.class {
			t.Errorf("%s × %s: %q in %q, want %q in %q", tc.variant, tc.assumption, got.Head, got.Class, tc.head, tc.class)
		}
	}
}

// The charts read at a glance: latencies that span orders of magnitude on
// a log scale, the others linear; every rate written in the grid.
func TestMatrixChartsScales(t *testing.T) {
	charts, err := matrixCharts(wideMatrix())
	if err != nil {
		t.Fatal(err)
	}
	logScale := map[string]bool{}
	for _, c := range charts {
		logScale[c.Title] = strings.HasPrefix(c.Note, "Log scale")
	}
	if !logScale["Acquire latency (ms)"] || logScale["Availability (% of time the lock was held)"] || logScale["Grants per minute"] {
		t.Errorf("log scales: %v", logScale)
	}
	grid := string(charts[0].SVG)
	for _, want := range []string{">original-literal<", ">100<", ">0.5<", ">n/a<", "fix-validity × pause: 1 of 200 seeds with a bug"} {
		if !strings.Contains(grid, want) {
			t.Errorf("rate grid lacks %q", want)
		}
	}
}

func TestChartNumbers(t *testing.T) {
	for _, tc := range []struct {
		largest float64
		top     float64
		labels  int
	}{{18, 20, 5}, {41.5, 50, 6}, {118.3, 125, 6}, {100, 100, 6}, {0.3, 0.3, 4}, {0, 1, 2}} {
		if top, labels := roundAxis(tc.largest); math.Abs(top-tc.top) > 1e-9 || labels != tc.labels {
			t.Errorf("roundAxis(%v) = %v, %d; want %v, %d", tc.largest, top, labels, tc.top, tc.labels)
		}
	}
	for k, want := range map[int]string{-2: "0.01", 0: "1", 2: "100", 3: "1k", 5: "100k", 6: "1M"} {
		if got := powerOfTen(k); got != want {
			t.Errorf("powerOfTen(%d) = %q, want %q", k, got, want)
		}
	}
	for rate, want := range map[float64]string{0: "0", 0.5: "0.5", 1: "1", 66.5: "67", 99.5: "99.5", 100: "100"} {
		if got := gridNumber(rate); got != want {
			t.Errorf("gridNumber(%v) = %q, want %q", rate, got, want)
		}
	}
	if lo, hi, log, _ := logRange([][]float64{{17.6, 914.5}, {226.6, 12013}}); lo != 1 || hi != 5 || !log {
		t.Errorf("logRange of 17.6 to 12,013 ms: 10^%v to 10^%v, log %v; want 10^1 to 10^5, log", lo, hi, log)
	}
}
