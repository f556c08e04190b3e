package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

var (
	chromiumFlag = flag.String("chromium", "", "the browser TestPagesInChromium loads pages in "+
		"(default: the first of chromium, chromium-browser, google-chrome on PATH)")
	screenshotsFlag = flag.String("screenshots", "", "also write a 1280x800 screenshot of every page TestPagesInChromium "+
		"loads into `DIR`, named after the page (go test ./reports -run Chromium -screenshots=../docs/screenshots)")
)

// A page is read in a 1280×800 window: what it must show before the reader
// scrolls or clicks.
const chromiumWindow = "1280,800"

// Every page the reports write, as headless Chromium shows it: no script
// error, the heading in view and on top, the violation in the first screen.
// A page added later (the timeline) is one more line of the table.
func TestPagesInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: loads every report page in headless Chromium (a few seconds)")
	}
	chromiumBinary(t)
	lostUpdate, lostPlan, lostV := longPausedHolder(12, false)
	starved, starvedPlan, starvedV := starvedWaiters(12)
	for _, p := range []struct {
		file      string // the page's name, and its screenshot's
		violation string // CSS selector of what must be in the first screen
		write     func(io.Writer) error
		more      string // with -screenshots, also the part of the page with this id: file-more.png
	}{
		{"matrix.html", ".matrix td.cell.unsafe, .matrix td.cell.lock, .matrix td.cell.live",
			func(w io.Writer) error { return HTML(w, wideMatrix()) }, "charts"},
		{"matrix-small.html", ".matrix td.cell.unsafe", func(w io.Writer) error { return HTML(w, sampleMatrix()) }, ""},
		{"cell.html", "svg.main .ovl", func(w io.Writer) error {
			h, plan, v := longPausedHolder(12, true)
			return TimelinePage(w, h, plan, v, cellInfo("original", v))
		}, ""},
		{"cell-porcupine.html", "#canvas .violation", func(w io.Writer) error {
			h, plan, v := longPausedHolder(12, true)
			return PorcupinePage(w, h, plan, PorcupineModelFor(v), porcupineInfo("original", v))
		}, ""},
		{"lost-update.html", "svg.main .usehl", func(w io.Writer) error {
			return TimelinePage(w, lostUpdate, lostPlan, lostV, cellInfo("fix-validity", lostV))
		}, ""},
		{"lost-update-porcupine.html", "#canvas .violation", func(w io.Writer) error {
			return PorcupinePage(w, lostUpdate, lostPlan, PorcupineModelFor(lostV), porcupineInfo("fix-validity", lostV))
		}, ""},
		{"liveness.html", "svg.main .wait", func(w io.Writer) error {
			return TimelinePage(w, starved, starvedPlan, starvedV, cellInfo("fix-quorum", starvedV))
		}, ""},
		{"liveness-porcupine.html", "#nothing-to-show", func(w io.Writer) error {
			return PorcupinePage(w, starved, starvedPlan, PorcupineModelFor(starvedV), porcupineInfo("fix-quorum", starvedV))
		}, ""},
	} {
		t.Run(strings.TrimSuffix(p.file, ".html"), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), p.file)
			var b bytes.Buffer
			if err := p.write(&b); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			chromiumCheck(t, path, p.violation)
			if p.more != "" && *screenshotsFlag != "" {
				chromiumScreenshot(t, path, p.more, filepath.Join(*screenshotsFlag, strings.TrimSuffix(p.file, ".html")+"-"+p.more+".png"))
			}
		})
	}
}

// cellInfo is a failing cell's timeline page info, as compare writes it.
func cellInfo(variant string, v model.Verdict) PageInfo {
	return PageInfo{Variant: variant, Seed: 3, Violation: v.Violations[0].String(),
		Replay: "locksim replay cells/" + variant + "-seed-3-min.json", Back: "../matrix.html",
		Porcupine: variant + "-porcupine.html"}
}

// porcupineInfo is the info of the porcupine page beside a cell's
// timeline page (explore.WritePages).
func porcupineInfo(variant string, v model.Verdict) PageInfo {
	info := cellInfo(variant, v)
	info.Back, info.BackTo, info.Porcupine = variant+".html", "the timeline", ""
	return info
}

// chromiumResult is what the check script saw in the loaded page; rects
// are [left, top, right, bottom] in CSS pixels of the window.
type chromiumResult struct {
	Errors          []string   `json:"errors"` // uncaught exceptions and console.error calls
	Heading         string     `json:"heading"`
	HeadingRect     [4]float64 `json:"headingRect"`
	HeadingInView   bool       `json:"headingInView"`
	HeadingOnTop    bool       `json:"headingOnTop"` // nothing covers its centre or its text
	HeadingCover    string     `json:"headingCover"` // what covers it
	Violation       string     `json:"violation"`    // the element the selector found; "" for none
	ViolationRect   [4]float64 `json:"violationRect"`
	ViolationInView bool       `json:"violationInView"`
	ViolationOnTop  bool       `json:"violationOnTop"` // it, or its own diagram, is at its centre
	ViolationCover  string     `json:"violationCover"`
	Overlaps        []string   `json:"overlaps"` // texts of a chart (an svg in a figure) that overlap
}

// chromiumCheck loads the page at htmlPath in headless Chromium, in a
// 1280×800 window, and fails t unless the page raised no error, its h1 is
// in the window and nothing covers it, the first element
// violationSelector finds is in the window, not covered by anything but
// its own diagram, and no two texts of a chart overlap. With -screenshots
// it also writes the page's screenshot.
func chromiumCheck(t *testing.T, htmlPath, violationSelector string) chromiumResult {
	t.Helper()
	r := loadInChromium(t, htmlPath, violationSelector)
	for _, e := range r.Errors {
		t.Errorf("%s: %s", filepath.Base(htmlPath), e)
	}
	for _, o := range r.Overlaps {
		t.Errorf("%s: labels overlap in %s", filepath.Base(htmlPath), o)
	}
	switch {
	case r.Heading == "":
		t.Errorf("%s has no h1", filepath.Base(htmlPath))
	case !r.HeadingInView:
		t.Errorf("%s: the heading %q is not in the first screen (at %v)", filepath.Base(htmlPath), r.Heading, r.HeadingRect)
	case !r.HeadingOnTop:
		t.Errorf("%s: the heading %q is covered by %s", filepath.Base(htmlPath), r.Heading, r.HeadingCover)
	}
	switch {
	case r.Violation == "":
		t.Errorf("%s: nothing matches %q", filepath.Base(htmlPath), violationSelector)
	case !r.ViolationInView:
		t.Errorf("%s: the violation (%s) is not in the first screen (at %v)", filepath.Base(htmlPath), r.Violation, r.ViolationRect)
	case !r.ViolationOnTop:
		t.Errorf("%s: the violation (%s) is covered by %s", filepath.Base(htmlPath), r.Violation, r.ViolationCover)
	}
	if *screenshotsFlag != "" {
		chromiumScreenshot(t, htmlPath, "", filepath.Join(*screenshotsFlag, strings.TrimSuffix(filepath.Base(htmlPath), ".html")+".png"))
	}
	return r
}

// chromiumScreenshot writes what the window shows of the page as a PNG
// file: from its top, or from the part of the page that holds the
// element whose id is from. (Headless Chromium paints nothing of a page
// scrolled to a fragment, so what comes before that part is left out of a
// copy of the page instead.)
func chromiumScreenshot(t *testing.T, htmlPath, from, png string) {
	t.Helper()
	abs, err := filepath.Abs(png)
	if err != nil {
		t.Fatal(err)
	}
	if from != "" {
		id, _ := json.Marshal(from)
		htmlPath = injectScript(t, htmlPath, "part-", `window.addEventListener('DOMContentLoaded', () => {
  let part = document.getElementById(`+string(id)+`)
  while (part !== null && part.parentElement !== document.body) {
    part = part.parentElement
  }
  while (part !== null && part.previousElementSibling !== null) {
    part.previousElementSibling.remove()
  }
})`)
	}
	runChromium(t, "--screenshot="+abs, fileURL(t, htmlPath))
}

// injectScript writes a copy of the page, beside it (so that its relative
// links resolve as they would) and named prefix+its name, with the script
// first thing in its head, and returns the copy's path.
func injectScript(t *testing.T, htmlPath, prefix, script string) string {
	t.Helper()
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	tag := "<script>" + script + "</script>"
	out := string(page)
	if i := strings.Index(out, "<head>"); i >= 0 {
		out = out[:i+len("<head>")] + tag + out[i+len("<head>"):]
	} else {
		out = tag + out
	}
	copyPath := filepath.Join(filepath.Dir(htmlPath), prefix+filepath.Base(htmlPath))
	if err := os.WriteFile(copyPath, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return copyPath
}

// fileURL is the file: URL of a page.
func fileURL(t *testing.T, htmlPath string) string {
	t.Helper()
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// loadInChromium loads a copy of the page with checkScript injected first
// thing, and reads what the script wrote into the dumped DOM.
func loadInChromium(t *testing.T, htmlPath, violationSelector string) chromiumResult {
	t.Helper()
	selector, _ := json.Marshal(violationSelector)
	copyPath := injectScript(t, htmlPath, "checked-", strings.Replace(checkScript, "VIOLATION_SELECTOR", string(selector), 1))
	dom := runChromium(t, "--dump-dom", fileURL(t, copyPath))
	const open, end = `<pre id="locksim-check">`, `</pre>`
	i := strings.Index(dom, open)
	j := strings.Index(dom[max(i, 0):], end)
	if i < 0 || j < 0 {
		t.Fatalf("%s: the check script wrote no result (did the page load?); dumped DOM ends:\n%s",
			filepath.Base(htmlPath), dom[max(0, len(dom)-2000):])
	}
	var r chromiumResult
	if err := json.Unmarshal([]byte(html.UnescapeString(dom[i+len(open):i+j])), &r); err != nil {
		t.Fatalf("%s: check result: %v", filepath.Base(htmlPath), err)
	}
	return r
}

// runChromium runs headless Chromium on the page at pageURL with one more
// flag (--dump-dom, --screenshot=FILE) and returns its standard output.
// Virtual time runs the page's timers at once, up to 5 s of them.
func runChromium(t *testing.T, flag, pageURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumBinary(t), "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-dev-shm-usage", "--no-first-run", "--run-all-compositor-stages-before-draw", "--user-data-dir="+t.TempDir(),
		"--window-size="+chromiumWindow, "--virtual-time-budget=5000", flag, pageURL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cmd.Path, flag, err, stderr.String())
	}
	return stdout.String()
}

// chromiumBinary is the browser to run, or skips t when there is none.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	if *chromiumFlag != "" {
		return *chromiumFlag
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH: the pages are not checked in a browser (-chromium=PATH names one)")
	return ""
}

// checkScript runs in the page before anything else: it records uncaught
// exceptions, failed loads and console.error calls, and once the page has
// loaded and its own scripts have run, what is at the heading's and the
// violation's places; it writes that as JSON into a <pre id="locksim-check">.
const checkScript = `
(function () {
  'use strict'
  const errors = []
  window.addEventListener('error', (e) => {
    const source = e.target && (e.target.src || e.target.href)
    errors.push(source ? 'failed to load ' + source : 'uncaught: ' + e.message + ' (' + e.filename + ':' + e.lineno + ')')
  }, true)
  window.addEventListener('unhandledrejection', (e) => errors.push('unhandled rejection: ' + e.reason))
  const consoleError = console.error
  console.error = function (...args) {
    errors.push('console.error: ' + args.join(' '))
    return consoleError.apply(console, args)
  }
  const describe = (el) => el === null ? 'nothing' : el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.getAttribute('class') ? '.' + el.getAttribute('class').trim().split(/\s+/).join('.') : '')
  const inView = (b) => b.width > 0 && b.height > 0 && b.left >= 0 && b.top >= 0 &&
    b.right <= document.documentElement.clientWidth && b.bottom <= document.documentElement.clientHeight
  const at = (b) => document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2)
  // Texts of a chart (an svg in a figure) whose boxes overlap by more
  // than a pixel each way.
  function overlaps() {
    const found = []
    for (const svg of document.querySelectorAll('figure svg')) {
      const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim() !== '')
      const boxes = texts.map((t) => t.getBoundingClientRect())
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, b] = [boxes[i], boxes[j]]
          if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) {
            const chart = svg.closest('figure').querySelector('h3')
            found.push((chart ? chart.textContent : 'a chart') + ': "' + texts[i].textContent + '" and "' + texts[j].textContent + '"')
          }
        }
      }
    }
    return found
  }
  function check() {
    const r = {errors}
    const h = document.querySelector('h1')
    if (h !== null) {
      const b = h.getBoundingClientRect()
      Object.assign(r, {heading: h.textContent.trim(), headingRect: [b.left, b.top, b.right, b.bottom],
        headingInView: inView(b), headingOnTop: true, headingCover: describe(at(b))})
      // Its centre, and a quarter, half and three quarters along each line
      // of its text: something fixed over its first line leaves the centre
      // of a long heading free.
      const text = document.createRange()
      text.selectNodeContents(h)
      const points = [[b.left + b.width / 2, b.top + b.height / 2]]
      for (const line of text.getClientRects()) {
        for (const f of [0.25, 0.5, 0.75]) {
          points.push([line.left + f * line.width, line.top + line.height / 2])
        }
      }
      for (const [x, y] of points) {
        const top = document.elementFromPoint(x, y)
        if (top === null || !h.contains(top)) {
          Object.assign(r, {headingOnTop: false, headingCover: describe(top) + ' at ' + Math.round(x) + ',' + Math.round(y)})
          break
        }
      }
    }
    const v = document.querySelector(VIOLATION_SELECTOR)
    if (v !== null) {
      const b = v.getBoundingClientRect()
      const top = at(b)
      const svg = v.closest('svg')
      Object.assign(r, {violation: describe(v), violationRect: [b.left, b.top, b.right, b.bottom],
        violationInView: inView(b), violationOnTop: top !== null && (v.contains(top) || (svg !== null && svg.contains(top))),
        violationCover: describe(top)})
    }
    r.overlaps = overlaps()
    const pre = document.createElement('pre')
    pre.id = 'locksim-check'
    pre.textContent = JSON.stringify(r)
    document.body.appendChild(pre)
  }
  window.addEventListener('load', () => setTimeout(check, 100))
})()
`

// longPausedHolder is pausedHolder in a longer run: rounds of three
// clients taking turns (each reads the counter and writes it plus one),
// then h0/t0 is granted and reads; h1/t0 is granted a minute later and
// increments; h0/t0's write of the value it read plus one lands after.
// With overlap h0/t0 paused and still believes it holds the lock when
// h1/t0 is granted (mutual exclusion and a lost update); without, its
// belief ended in time but its write, delayed, lands late (a lost update
// only).
func longPausedHolder(rounds int, overlap bool) (model.History, faults.Plan, model.Verdict) {
	var h model.History
	for _, name := range []string{"h0/t0", "h1/t0", "h2/t0"} {
		h.Clients = append(h.Clients, model.Client{Name: name, Host: name[:2]})
	}
	var seq uint64
	add := func(t float64, c int, k model.Kind, e model.Event) {
		seq++
		e.Seq, e.Time, e.Client, e.Kind = seq, sec(t), c, k
		h.Events = append(h.Events, e)
	}
	turn := func(t float64, c int, value int64) {
		add(t, c, model.AcquireCall, model.Event{})
		add(t+0.012, c, model.AcquireReturn, model.Event{Granted: true})
		add(t+0.1, c, model.ResourceRead, model.Event{Value: value, Accepted: true})
		add(t+0.2, c, model.ResourceWrite, model.Event{Value: value + 1, Accepted: true})
		add(t+0.5, c, model.BeliefEnd, model.Event{Reason: "release"})
		add(t+0.5, c, model.ReleaseCall, model.Event{})
		add(t+0.51, c, model.ReleaseReturn, model.Event{})
	}
	for r := range rounds {
		turn(1+2*float64(r), r%3, int64(r))
	}
	v := int64(rounds)
	t0 := 1 + 2*float64(rounds)
	add(t0, 0, model.AcquireCall, model.Event{})
	add(t0+0.012, 0, model.AcquireReturn, model.Event{Granted: true})
	add(t0+0.1, 0, model.ResourceRead, model.Event{Value: v, Accepted: true})
	if !overlap {
		add(t0+1, 0, model.BeliefEnd, model.Event{Reason: "validity"})
	}
	turn(t0+60.5, 1, v)
	add(t0+70.5, 0, model.ResourceWrite, model.Event{Value: v + 1, Accepted: true})
	if overlap {
		add(t0+70.6, 0, model.BeliefEnd, model.Event{Reason: "release"})
	}
	h.End = sec(t0 + 80)
	plan := faults.Plan{Events: []faults.Event{{At: 5 * time.Second, Kind: faults.Crash, Node: 1, For: 3 * time.Second}}}
	if overlap {
		plan.Events = append(plan.Events, faults.Event{At: time.Duration(sec(t0 + 0.15)), Kind: faults.Pause, Client: 0, For: 70 * time.Second})
	}
	verdict := model.Verdict{Violations: []model.Violation{
		{Kind: model.MutualExclusion, Time: sec(t0 + 60.512), Clients: []int{0, 1},
			Story: "h1/t0 was granted the lock while h0/t0, paused, still believed it held it"},
		{Kind: model.LostUpdate, Time: sec(t0 + 70.5), Clients: []int{0, 1},
			Story: fmt.Sprintf("h0/t0 wrote %d over h1/t0's %d: one increment lost", v+1, v+1)},
	}}
	if !overlap {
		verdict.Violations = verdict.Violations[1:]
	}
	return h, plan, verdict
}

// starvedWaiters is rounds of three clients taking turns, then h0/t0's
// release lost in a partition: its lock item stays, and h1/t0 and h2/t0
// are denied for a minute while no one holds the lock, a liveness failure
// with nothing illegal in it.
func starvedWaiters(rounds int) (model.History, faults.Plan, model.Verdict) {
	h, _, _ := longPausedHolder(rounds, false)
	h.Events = h.Events[:7*rounds] // the turns only
	seq := h.Events[len(h.Events)-1].Seq
	add := func(t float64, c int, k model.Kind, e model.Event) {
		seq++
		e.Seq, e.Time, e.Client, e.Kind = seq, sec(t), c, k
		h.Events = append(h.Events, e)
	}
	t0 := 1 + 2*float64(rounds)
	add(t0, 0, model.AcquireCall, model.Event{})
	add(t0+0.012, 0, model.AcquireReturn, model.Event{Granted: true})
	add(t0+0.5, 0, model.BeliefEnd, model.Event{Reason: "release"})
	add(t0+0.5, 0, model.ReleaseCall, model.Event{})
	add(t0+0.6, 0, model.ReleaseReturn, model.Event{})
	for i := range 12 {
		c := 1 + i%2
		add(t0+1+5*float64(i), c, model.AcquireCall, model.Event{})
		add(t0+1.02+5*float64(i), c, model.AcquireReturn, model.Event{})
	}
	h.End = sec(t0 + 62)
	plan := faults.Plan{Events: []faults.Event{
		{At: time.Duration(sec(t0 + 0.4)), Kind: faults.Partition, Hosts: []int{0}, Nodes: []int{0, 1, 2}, For: 2 * time.Second},
	}}
	v := model.Verdict{Violations: []model.Violation{{Kind: model.Liveness, Time: sec(t0 + 1), End: sec(t0 + 61),
		Clients: []int{1, 2}, Story: "h1/t0 and h2/t0 waited 60s while no one held the lock and the nodes were reachable"}}}
	return h, plan, v
}
