package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
)

// The quick comparison a bare `locksim` runs: every variant inside its
// envelope under all fault classes at once, with enough seeds for a ✓ to
// mean something (it says what rate 95% confidence rules out), and what
// breaking each assumption costs; short runs. A few seconds on two cores.
const (
	quickSeeds     = 300
	quickCostSeeds = 40
	quickDuration  = 5 * time.Minute
)

// quickCompare is `locksim` without arguments: the README's main job.
func quickCompare(stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "locksim: quick comparison, every variant inside its envelope under all faults (%d seeds each) "+
		"and beyond it (%d seeds per assumption), %s runs; locksim compare has a column per fault class, locksim help the other commands.\n",
		quickSeeds, quickCostSeeds, envelope.Span(quickDuration))
	return compare(quickArgs(), stdout, stderr, true)
}

// quickOut is where the quick comparison writes its full reports.
const quickOut = "locksim-report"

// quickArgs are the compare flags of the quick comparison.
func quickArgs() []string {
	return []string{"-n", fmt.Sprint(quickSeeds), "-costs", fmt.Sprint(quickCostSeeds), "-faults", "all",
		"-duration", envelope.Span(quickDuration), "-out", quickOut}
}

// compareOutputs are where compare writes its reports.
type compareOutputs struct {
	md, html, json string // report files; "" for none
	cellsDir       string // the pages of each failing cell; "" for none
	linkBase       string // the directory links in the reports are relative to
}

// compareAbout is compare's -h text.
var compareAbout = "Runs every variant against every fault class, the same seeds 1..N in every cell, each drawn\n" +
	"inside the variant's envelope, and prints the matrix as Markdown on stdout (progress on\n" +
	"stderr). Per cell: seeds with a bug (a promised property broken inside the envelope), the\n" +
	"kinds (M lock level, U resource level, L liveness, A abort), the seed of the first bug,\n" +
	"the size of its minimised fault plan and the command that replays it; a clean cell says\n" +
	"what failure rate its seeds rule out with 95% confidence. Apart from it, -costs N seeds per\n" +
	"variant and assumption it makes, drawn to break that assumption alone: what it costs.\n" +
	"Per variant: grants\n" +
	"per simulated minute, acquire latency p50/p99, availability, messages per grant, pooled\n" +
	"over all its runs. The output is deterministic: the same flags give the same bytes, whatever\n" +
	"-parallel is. -md writes it under a note naming the command that regenerates it.\n" +
	"-html writes a page with charts, linking each failing cell to the timeline page (and porcupine's) of\n" +
	"its first counterexample (written into -out, or next to the page). Exit 0 once the reports\n" +
	"are written, whatever the matrix shows; 2 on bad usage. Without arguments, locksim runs\n" +
	"a quick compare: " + strings.Join(quickArgs(), " ") + "."

func compareCmd(args []string, stdout, stderr io.Writer) int {
	return compare(args, stdout, stderr, false)
}

// compareFlags are compare's flags: the scenario's world, the matrix's
// seeds, rows and columns, its reports, and isolation's.
type compareFlags struct {
	cf                       configFlags
	iso                      isolationFlags
	out                      compareOutputs
	count, seeds, world      *string
	variantList, classList   *string
	outDir                   *string
	costs, exhaust, parallel *int
	minimize, asJSON         *bool
}

// register defines compare's flags on f, and what replaced the ones it no
// longer has.
func (c *compareFlags) register(f *cmdFlags) {
	f.renamed = map[string]string{"fixed-world": "-world none"}
	c.cf.register(f, sim.DefaultConfig())
	c.count = f.String("n", "30", "seeds per cell, from seed 1 (or use -seeds): a number, or one with a unit (10k)")
	c.seeds = f.String("seeds", "", "inclusive seed range FROM..TO of every cell, or FROM.. with -n COUNT seeds (default 1..COUNT)")
	c.costs = f.Int("costs", 30, "seeds per variant and assumption, drawn to break it (0: no cost table)")
	c.exhaust = f.Int("exhaust", 0, "add the systematic exploration: every schedule of the small world with at most this many faults, per variant (0: none; see locksim explore)")
	c.variantList = f.String("variants", "", "variants to compare, comma-separated (default: all, see locksim variants)")
	c.classList = f.String("faults", "", "fault classes, the matrix's columns, comma-separated (default: all of "+classList()+")")
	c.world = f.String("world", "", "fields of the world a cell's seeds may draw, comma-separated, from: "+worldFieldList()+"; or all, or none (default: each cell draws those its fault class's bugs live in, less any a scenario flag or the -config file pins; a list narrows that)")
	c.parallel = f.Int("parallel", 0, "workers (0: every core)")
	c.minimize = f.Bool("minimize", true, fmt.Sprintf("minimise each failing cell's first counterexample (at most %d runs)", explore.CompareMinimizeRuns))
	c.asJSON = f.Bool("json", false, "print the matrix as JSON on stdout instead of the Markdown (-out writes it to DIR/matrix.json)")
	f.StringVar(&c.out.md, "md", "", "write the Markdown matrix, with its regenerate note, to FILE")
	f.StringVar(&c.out.html, "html", "", "write the HTML report (matrix, charts, each failing cell's timeline and porcupine pages) to FILE")
	c.outDir = f.String("out", "", "directory for every report: matrix.md, matrix.html, matrix.json (unless named above) and cells/*.html (default: none, only what -md and -html name)")
	c.iso.register(f)
}

// options are the comparison the flags ask for, checked in the order the
// errors are reported; they also fill in the reports -out implies.
func (c *compareFlags) options(f *cmdFlags) (explore.CompareOptions, error) {
	if err := checkCompareInput(f, *c.parallel, *c.costs, c.out, *c.outDir); err != nil {
		return explore.CompareOptions{}, err
	}
	opts, err := compareOptions(f, c.cf, *c.count, *c.seeds, *c.world)
	if err != nil {
		return opts, err
	}
	opts.CostSeeds, opts.Parallel, opts.Minimize, opts.Exhaust = *c.costs, *c.parallel, *c.minimize, *c.exhaust
	if opts.Isolate, err = c.iso.isolation(); err != nil {
		return opts, err
	}
	if *c.exhaust < 0 || *c.exhaust > 4 {
		return opts, fmt.Errorf("-exhaust %d is not between 0 and 4", *c.exhaust)
	}
	if opts.Variants, err = lookupVariants(*c.variantList); err != nil {
		return opts, err
	}
	if opts.Classes, err = faults.ParseClasses(*c.classList); err == nil {
		err = opts.CheckWorlds() // no cell may draw a world past the limits
	}
	if err != nil {
		return opts, err
	}
	c.out.resolve(*c.outDir)
	return opts, nil
}

// compare is compareCmd; text prints the terminal's table (reports.Text)
// on stdout instead of the Markdown, and names the reports written.
func compare(args []string, stdout, stderr io.Writer, text bool) int {
	f := newFlags("compare", "locksim compare [-n N | -seeds FROM..TO] [-costs N] [-variants A,B] [-faults CLASS,...] [-world FIELD,...|none] [-parallel N] [-md FILE] [-html FILE] [-json] [-out DIR] [scenario flags]",
		compareAbout,
		"locksim compare -n 30 -md reports/VARIANTS.md   # regenerate the committed matrix",
		"locksim compare -n 100 -variants original,corrected,fenced -faults pause,skew -html out/compare.html",
		"locksim compare -n 20 -out out   # out/matrix.{md,html,json} and out/cells/*.html")
	var c compareFlags
	c.register(f)
	pos, code, done := f.parse(args, stdout, stderr)
	switch {
	case done:
		return code
	case len(pos) > 0 && *c.asJSON:
		return f.fail(stderr, fmt.Errorf("unexpected argument %q: -json is now a switch, the matrix as JSON on stdout; -out DIR writes DIR/matrix.json", pos[0]))
	case len(pos) > 0:
		return f.fail(stderr, fmt.Errorf("unexpected argument %q", pos[0]))
	}
	opts, err := c.options(f)
	if err != nil {
		return f.fail(stderr, err)
	}

	pages := cellPages{out: &c.out, links: map[string]string{}}
	prog := newCompareProgress(stderr, cellCount(opts))
	opts.OnCell = func(r explore.CellResult) {
		prog.cell(r)
		pages.write(r)
	}
	m, err := explore.Compare(opts)
	prog.clear()
	if err == nil {
		err = pages.link(&m)
	}
	if err != nil {
		return f.fail(stderr, err)
	}
	if err := c.out.write(m, seedrun.CommandPrefix+" compare "+shellJoin(args)); err != nil {
		return f.fail(stderr, err)
	}
	if err := printMatrix(stdout, m, *c.asJSON, text, &c.out); err != nil {
		return f.fail(stderr, err)
	}
	prog.done()
	return exitOK
}

// printMatrix prints the matrix on stdout: as JSON with -json, as the
// terminal's table followed by the reports out wrote with text, else as
// Markdown.
func printMatrix(stdout io.Writer, m reports.Matrix, asJSON, text bool, out *compareOutputs) error {
	switch {
	case asJSON:
		return reports.JSON(stdout, m)
	case text:
		if err := reports.Text(stdout, m); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nthe whole report, with the stories, costs, metrics and the pages of the failing cells:\n  %s\n",
			strings.Join(out.written(), "\n  "))
		return nil
	}
	return reports.Markdown(stdout, m)
}

// compareOptions are the seeds, world and fields compare's flags ask for.
func compareOptions(f *cmdFlags, cf configFlags, count, seeds, world string) (explore.CompareOptions, error) {
	var o explore.CompareOptions
	cfg, fromFile, err := cf.effective(f)
	if err != nil {
		return o, err
	}
	n, err := parseCount(count)
	if err != nil || n == forever {
		return o, cmp.Or(err, fmt.Errorf("-n forever has no end: a matrix needs a count of seeds per cell"))
	}
	o.Config = cfg
	if o.From, o.Seeds, err = seedsFrom(f, seeds, n); err != nil {
		return o, err
	}
	if err := checkSeeds(o.From, o.Seeds); err != nil {
		return o, err
	}
	if !f.set("world") {
		for _, w := range envelope.EveryWorldField {
			if pinningFlag(f, w) != "" || slices.Contains(fromFile, w) {
				o.Pin = append(o.Pin, w)
			}
		}
		return o, nil
	}
	draw, err := parseWorldFlag(f, world)
	if err != nil {
		return o, err
	}
	for _, w := range envelope.EveryWorldField {
		if !slices.Contains(draw, w) {
			o.Pin = append(o.Pin, w)
		}
	}
	return o, nil
}

// lookupVariants is the variants a comma-separated list names, or every
// variant when it is empty.
func lookupVariants(list string) ([]algorithm.Variant, error) {
	if list == "" {
		return variants.All(), nil
	}
	var vs []algorithm.Variant
	for _, name := range splitList(list) {
		v, err := variants.Lookup(name)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// cellPages writes the pages (timeline, porcupine) of each failing cell as compare
// delivers it, and links the matrix's cells to them.
type cellPages struct {
	out   *compareOutputs
	links map[string]string // by variant and class
	err   error             // the first page that could not be written
}

func (p *cellPages) write(r explore.CellResult) {
	if p.out.cellsDir == "" || r.First == nil || p.err != nil {
		return
	}
	link, err := p.out.writeCellHTML(r)
	if err != nil {
		p.err = fmt.Errorf("cannot write the pages of %s × %s: %v", r.Variant, r.Cell.Class, err)
		return
	}
	p.links[r.Variant+"\x00"+string(r.Cell.Class)] = link
}

// link sets each cell's HTMLLink, or says which page could not be written.
func (p *cellPages) link(m *reports.Matrix) error {
	if p.err != nil {
		return p.err
	}
	for i := range m.Rows {
		for j := range m.Rows[i].Cells {
			m.Rows[i].Cells[j].HTMLLink = p.links[m.Rows[i].Variant+"\x00"+string(m.Rows[i].Cells[j].Class)]
		}
	}
	return nil
}

// resolve fills in what -out implies: the reports it names and where the
// cells' pages go (next to the HTML report when there is no -out).
func (o *compareOutputs) resolve(dir string) {
	if dir != "" {
		orDefault := func(s *string, name string) {
			if *s == "" {
				*s = filepath.Join(dir, name)
			}
		}
		orDefault(&o.md, "matrix.md")
		orDefault(&o.html, "matrix.html")
		orDefault(&o.json, "matrix.json")
		o.cellsDir = filepath.Join(dir, "cells")
	} else if o.html != "" {
		o.cellsDir = strings.TrimSuffix(o.html, filepath.Ext(o.html)) + "-cells"
	}
	switch {
	case o.html != "":
		o.linkBase = filepath.Dir(o.html)
	case o.json != "":
		o.linkBase = filepath.Dir(o.json)
	default:
		o.linkBase = dir
	}
}

// writeCellHTML writes the timeline and porcupine pages of a failing cell's
// counterexample, minimised when compare minimised it (with its repro file
// beside the page, which the page's replay command reads), and returns its
// link, relative to the reports.
func (o *compareOutputs) writeCellHTML(r explore.CellResult) (string, error) {
	if err := os.MkdirAll(o.cellsDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(o.cellsDir, fmt.Sprintf("%s-%s-seed-%d.html", r.Variant, r.Cell.Class, r.First.Seed))
	shown := *r.First
	info := reports.PageInfo{Variant: r.Variant, Seed: r.First.Seed, Replay: explore.ReplayCommand(r.Target, r.First.Seed)}
	if m, replay, ok := o.minimal(r); ok {
		shown, info.Replay = m, replay
	}
	for _, report := range []string{o.html, o.md} {
		if report != "" {
			if back, err := filepath.Rel(o.cellsDir, report); err == nil {
				info.Back = filepath.ToSlash(back)
				break
			}
		}
	}
	if err := explore.WritePages(path, shown, "", info); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(o.linkBase, path)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// minimal is the cell's minimised counterexample, run again for its
// history, with its repro written into the cells directory, and the command
// that replays it; false when compare did not minimise the cell.
func (o *compareOutputs) minimal(r explore.CellResult) (explore.Outcome, string, bool) {
	if r.Minimal == nil {
		return explore.Outcome{}, "", false
	}
	opt := explore.DefaultOptions()
	opt.Keep = true
	out, err := explore.RunPlan(r.Minimal.Target, r.First.Seed, r.Minimal.Outcome.Plan, opt)
	if err != nil || out.Verdict.OK() {
		return explore.Outcome{}, "", false
	}
	repro := explore.NewRepro(r.Minimal.Target, out)
	repro.Minimized = true
	path, err := explore.WriteRepro(o.cellsDir, repro)
	if err != nil {
		return explore.Outcome{}, "", false
	}
	return out, explore.ReplayFileCommand(path), true
}

// write writes the reports that were asked for.
func (o *compareOutputs) write(m reports.Matrix, command string) error {
	for _, r := range []struct {
		path   string
		render func(io.Writer) error
	}{
		{o.md, func(w io.Writer) error {
			if err := explore.CompareMarkdown(w, m, command); err != nil {
				return err
			}
			// The real libraries' verdicts, below their marker, are another
			// sweep's: a regenerated matrix keeps them.
			if old, err := os.ReadFile(o.md); err == nil {
				if i := bytes.Index(old, []byte(explore.RealLibrariesMarker)); i >= 0 {
					_, err := w.Write(old[i:])
					return err
				}
			}
			return nil
		}},
		{o.html, func(w io.Writer) error { return reports.HTML(w, m) }},
		{o.json, func(w io.Writer) error { return reports.JSON(w, m) }},
	} {
		if r.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := r.render(&b); err != nil {
			return err
		}
		if dir := filepath.Dir(r.path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		if err := explore.WriteFileAtomic(r.path, b.Bytes()); err != nil {
			return fmt.Errorf("cannot write %s: %v", r.path, err)
		}
	}
	return nil
}

func cellCount(o explore.CompareOptions) int {
	v, c := len(o.Variants), len(o.Classes)
	if v == 0 {
		v = len(variants.Names())
	}
	if c == 0 {
		c = len(faults.Classes)
	}
	return v * c
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// shellJoin writes args as a shell would need them, quoting only when needed.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// compareProgress reports cells as they complete on stderr: one redrawn line
// on a terminal, a line every few seconds otherwise. Wall time is fine here.
type compareProgress struct {
	w            io.Writer
	tty, drawn   bool
	total, cells int
	failing      int
	start, last  time.Time
}

func newCompareProgress(w io.Writer, total int) *compareProgress {
	now := time.Now()
	return &compareProgress{w: w, tty: isTerminal(w), total: total, start: now, last: now}
}

func (p *compareProgress) cell(r explore.CellResult) {
	p.cells++
	if r.Cell.Violations > 0 {
		p.failing++
	}
	now := time.Now()
	line := fmt.Sprintf("compare: %d/%d cells, %d with violations, %s (%s × %s)",
		p.cells, p.total, p.failing, now.Sub(p.start).Round(100*time.Millisecond), r.Variant, r.Cell.Class)
	switch {
	case p.tty && now.Sub(p.last) >= barInterval:
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn, p.last = true, now
	case !p.tty && now.Sub(p.last) >= lineInterval:
		fmt.Fprintln(p.w, line)
		p.last = now
	}
}

func (p *compareProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func (p *compareProgress) done() {
	fmt.Fprintf(p.w, "compare: %d cells, %d with violations, in %s\n", p.cells, p.failing, time.Since(p.start).Round(100*time.Millisecond))
}

// written names the reports compare writes, in the order it writes them.
func (o *compareOutputs) written() []string {
	var out []string
	for _, p := range []string{o.md, o.html, o.json} {
		if p != "" {
			out = append(out, p)
		}
	}
	if o.cellsDir != "" {
		out = append(out, o.cellsDir+string(filepath.Separator))
	}
	return out
}
