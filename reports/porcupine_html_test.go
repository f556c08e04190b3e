package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

func porcupinePage(t *testing.T, which string) string {
	t.Helper()
	h, plan, _ := pausedHolder()
	var b bytes.Buffer
	if err := PorcupineHTML(&b, h, plan, which); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPorcupineHTMLMutexAnnotatesFaultsAndOverlap(t *testing.T) {
	page := porcupinePage(t, "mutex")
	for _, want := range []string{
		"<html", "crash n1 for 30s (wipe)", "partition {n0,h1} one-way for 20s", "jump h0 +90s",
		"pause h0/t0 for 70s", "topology → n3,n4,n0", "fault n1", "at 30.000s until 60.000s (true time)",
		"mutual-exclusion", faultColour, violationColour,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("mutex page lacks %q", want)
		}
	}
}

func TestPorcupineHTMLCounterAnnotatesLostUpdate(t *testing.T) {
	page := porcupinePage(t, "counter")
	for _, want := range []string{"crash n1 for 30s (wipe)", "lost-update"} {
		if !strings.Contains(page, want) {
			t.Errorf("counter page lacks %q", want)
		}
	}
}

func TestPorcupineHTMLSafeHistoryHasNoViolation(t *testing.T) {
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0"}},
		Events: []model.Event{
			{Seq: 1, Time: sec(1), Kind: model.AcquireCall},
			{Seq: 2, Time: sec(2), Kind: model.AcquireReturn, Granted: true},
			{Seq: 3, Time: sec(3), Kind: model.BeliefEnd, Reason: "release"},
		},
		End: sec(4),
	}
	var b bytes.Buffer
	if err := PorcupineHTML(&b, h, faults.Plan{}, "mutex"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"BackgroundColor":"`+violationColour) {
		t.Error("a safe history is annotated with a violation")
	}
}

func TestPorcupineHTMLRejectsUnknownModel(t *testing.T) {
	h, plan, _ := pausedHolder()
	if err := PorcupineHTML(&bytes.Buffer{}, h, plan, "queue"); err == nil {
		t.Error("no error for an unknown model")
	}
}

func TestNearestSeq(t *testing.T) {
	h := model.History{Events: []model.Event{{Seq: 4, Time: 10}, {Seq: 5, Time: 20}, {Seq: 6, Time: 20}, {Seq: 7, Time: 40}}}
	for _, tc := range []struct{ t, want int64 }{
		{5, 3}, {10, 4}, {14, 4}, {15, 5}, {20, 5}, {29, 6}, {31, 7}, {40, 7}, {41, 8},
	} {
		if got := nearestSeq(h, tc.t); got != tc.want {
			t.Errorf("nearestSeq(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
	if got := nearestSeq(model.History{}, 5); got != 0 {
		t.Errorf("empty history: %d", got)
	}
}

// A page with its info is titled by the variant, seed and violation, and
// says the replay command and links back, escaped.
func TestPorcupinePageIsTitledAndLinksBack(t *testing.T) {
	h, plan, _ := pausedHolder()
	var b bytes.Buffer
	info := PageInfo{Variant: "fix-<x>", Seed: 7, Violation: "mutual-exclusion at 1s", Replay: "locksim replay -seed 7", Back: "../VARIANTS.md"}
	if err := PorcupinePage(&b, h, plan, "mutex", info); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<title>locksim: fix-&lt;x&gt;, seed 7: mutual-exclusion at 1s</title>",
		"<code>locksim replay -seed 7</code>", `<a href="../VARIANTS.md">back to the matrix</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Count(page, "<title>") != 1 {
		t.Errorf("%d titles", strings.Count(page, "<title>"))
	}
}

// porcupineCellPage is the page compare writes for a failing cell.
func porcupineCellPage(t *testing.T, h model.History, plan faults.Plan, v model.Verdict) string {
	t.Helper()
	var b bytes.Buffer
	if err := PorcupinePage(&b, h, plan, PorcupineModelFor(v), cellInfo("original", v)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The page's heading is an h1 that porcupine's legend, in the flow below
// it, no longer covers; the rows are named by client, and a script marks
// the violation and scrolls the diagram to it.
func TestPorcupinePageHeadingLegendAndRowNames(t *testing.T) {
	h, plan, v := pausedHolder()
	page := porcupineCellPage(t, h, plan, v)
	heading, legend := strings.Index(page, "<h1>"), strings.Index(page, `<div id="legend">`)
	if heading < 0 || legend < heading {
		t.Errorf("the h1 (at %d) is not above porcupine's legend (at %d)", heading, legend)
	}
	for _, want := range []string{
		"<h1>locksim: original, seed 3 <span class=\"locksim-headline\">— mutual-exclusion at 62.015s</span></h1>",
		"#legend { position: static;", `const names = ["h0/t0","h1/t0"]`, "classList.add('violation')", "canvas.scrollLeft",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "nothing-to-show") {
		t.Error("a page that shows its violation says it has nothing to show")
	}
}

// A liveness failure is nothing linearizability can show: the page says
// so above the diagram and points to the timeline.
func TestPorcupinePageSaysLivenessHasNothingToShow(t *testing.T) {
	h, plan, v := starvedWaiters(2)
	page := porcupineCellPage(t, h, plan, v)
	for _, want := range []string{
		`<div class="locksim-notice" id="nothing-to-show">`, "Linearizability has nothing to show for a liveness failure.",
		"The run's timeline shows it: the replay command below prints the timeline around the violation",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("liveness page lacks %q", want)
		}
	}
	if strings.Contains(page, `"BackgroundColor":"`+violationColour) {
		t.Error("a liveness page marks a violation in porcupine's diagram")
	}
}

// Another violation the diagram cannot show (a panic) is said too, and
// without a replay command the page still says where the timeline is.
func TestPorcupinePageSaysWhatItCannotShow(t *testing.T) {
	h, plan, _ := starvedWaiters(2)
	var b bytes.Buffer
	info := PageInfo{Variant: "v", Seed: 1, Violation: "panic at 3.000s: h1/t0's algorithm panicked"}
	if err := PorcupinePage(&b, h, plan, "mutex", info); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"does not show the run's first violation</strong> (panic)", "with <code>-trace</code> to print it"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
