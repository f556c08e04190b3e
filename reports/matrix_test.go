package reports

import (
	"bytes"
	"encoding/json"
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
