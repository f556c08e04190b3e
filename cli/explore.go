package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// exploreAbout is explore's -h text.
const exploreAbout = "Runs every schedule of a small world with at most -max-faults deviations from the\n" +
	"default run, for 0, 1, ... faults in turn (explore.Exhaust): the default run takes the\n" +
	"lowest latency, no loss and no fault at every choice point; a deviation loses, delays or\n" +
	"duplicates one message, crashes or restarts without data the node a client is about to\n" +
	"call (or, while a client holds the lock, any node), pauses the holder just within or past\n" +
	"its validity, steps a node's clock forward or a host's either way just under or past the\n" +
	"TTL, or moves the key (the node called leaves the key's nodes, the key is on no node for\n" +
	"half a TTL, or it moves off its nodes during a hold). Only the deviations the\n" +
	"variant's envelope allows are offered (the faults: line lists them), unless\n" +
	"-beyond breaks an assumption on purpose. Breadth-first by the number of faults, so the\n" +
	"first counterexample has the fewest faults there are: it is printed with its timeline,\n" +
	"written as a repro (the schedule is in it) and replayable with locksim replay FILE.\n" +
	"With none, it prints a bounded result: no violation in all N schedules with at most k\n" +
	"faults in this world. The world is small on purpose (-nodes 1..3, -hosts 2..3 clients,\n" +
	"-acquisitions 1..2 grants each); every scenario flag applies. Each level counts its\n" +
	"schedules and the distinct executions among them; no partial-order or symmetry reduction\n" +
	"is applied.\n" +
	"A run that takes longer than -hang-after (a lock that loops without calling its Env) ends\n" +
	"the exploration with a hang finding, its repro and replay line.\n" +
	"An interrupt (Ctrl-C) ends the level being run, and says how far it got; a counterexample\n" +
	"is written as soon as a worker finds one.\n" +
	"Exit 0: no violation (or the -max-schedules budget ran out first, which it says); 1: a\n" +
	"counterexample; 2: bad usage; 130: interrupted with no counterexample."

// exploreFlags are explore's flags: the scenario's world, what to explore
// and how, and isolation's.
type exploreFlags struct {
	cf                            configFlags
	iso                           isolationFlags
	name, classes, world, beyond  *string
	out                           *string
	k, budget, parallel           *int
	asJSON, keepGoing, safetyOnly *bool
	strict, trace                 *bool
}

// register defines explore's flags on f, the small world's scenario flags
// first.
func (ef *exploreFlags) register(f *cmdFlags) {
	ef.cf.register(f, explore.SmallWorld(3, 2, 1))
	ef.name = f.String("variant", "original", "lock algorithm to explore (see locksim variants)")
	ef.classes = f.String("faults", "all", "fault classes whose deviations a schedule may take, comma-separated, from: "+classList()+" (partition: message losses; threads and none: the default run's, see -threads)")
	ef.world = f.String("world", "none", "none: explore runs the one small world the scenario flags give (there is no seed to draw one from; sweep draws worlds)")
	ef.asJSON = f.Bool("json", false, "print the result (levels, counts, the counterexample's verdict, repro and replay line) as JSON on stdout")
	ef.k = f.Int("max-faults", 2, "explore every schedule with at most this many faults, 0 to 6")
	ef.budget = f.Int("max-schedules", explore.DefaultMaxSchedules, "stop, saying so, before a level that would take more schedules than this")
	ef.beyond = f.String("beyond", "", "assumptions of the envelope to break on purpose, comma-separated, or all (default: only faults inside it)")
	ef.keepGoing = f.Bool("keep-going", false, "explore every level up to -max-faults even after one with a counterexample, counting what fails at each")
	ef.safetyOnly = f.Bool("safety-only", false, "judge safety only: leave liveness (waiters starved, items left behind) unjudged")
	ef.strict = f.Bool("strict", false, "fail on every violation, also those outside the envelope and of properties the variant does not promise")
	ef.parallel = f.Int("parallel", 0, "workers (0: every core)")
	ef.out = f.String("out", defaultReproDir, "directory for the counterexample's repro file")
	ef.trace = f.Bool("trace", false, "print the counterexample's full timeline")
	ef.iso.register(f)
}

// options are the target and the exploration the flags ask for, checked
// in the order the errors are reported.
func (ef *exploreFlags) options(f *cmdFlags) (explore.Target, explore.ExhaustOptions, error) {
	iso, err := ef.iso.isolation()
	if err != nil {
		return explore.Target{}, explore.ExhaustOptions{}, err
	}
	if err := checkExploreInput(f, *ef.parallel, *ef.out); err != nil {
		return explore.Target{}, explore.ExhaustOptions{}, err
	}
	if *ef.world != "none" {
		return explore.Target{}, explore.ExhaustOptions{}, fmt.Errorf("-world %s: explore runs the one small world the scenario flags give, with no seed to draw one from; sweep -world draws them", *ef.world)
	}
	cfg, _, err := ef.cf.effective(f)
	if err != nil {
		return explore.Target{}, explore.ExhaustOptions{}, err
	}
	if f.set("nodes") && !f.set("replication") {
		cfg.Replication = cfg.Nodes // the small world keeps the key on every node
	}
	t, o, err := exploreTarget(f, cfg, *ef.name, *ef.beyond, *ef.k, *ef.budget)
	if err == nil {
		err = narrowMenu(&t, &o, *ef.classes)
	}
	if err != nil {
		return explore.Target{}, explore.ExhaustOptions{}, err
	}
	o.Parallel, o.Strict, o.KeepGoing, o.HangAfter, o.Isolate = *ef.parallel, *ef.strict, *ef.keepGoing, ef.iso.budget(), iso
	o.Check.SkipLiveness = *ef.safetyOnly
	return t, o, nil
}

func exploreCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("explore", "locksim explore [-variant NAME] [-max-faults K] [-faults CLASS,...] [-beyond ASSUMPTION,...] [-safety-only] [-json] [-out DIR] [scenario flags]",
		exploreAbout,
		"locksim explore -variant original -max-faults 1",
		"locksim explore -variant corrected -max-faults 2   # a bounded result",
		"locksim explore -variant fix-validity -nodes 2 -acquisitions 2 -safety-only",
		"locksim explore -variant corrected -beyond use-within-validity -max-faults 1",
		"locksim explore -variant original -faults pause,crash -json")
	var ef exploreFlags
	ef.register(f)
	if code, done := f.parseNone(args, stdout, stderr); done {
		return code
	}
	t, o, err := ef.options(f)
	if err != nil {
		return f.fail(stderr, err)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		// Unlike a sweep's, an exploration's live heap is large (a level of
		// millions of schedules): Go's default GOGC keeps the heap at twice
		// that, not the sweeps' five times.
		defer debug.SetGCPercent(debug.SetGCPercent(100))
	}
	head := stdout
	if *ef.asJSON {
		head = stderr // stdout is for the JSON alone
	}
	describeExplore(head, t, *o.Menu, *ef.k)
	// An interrupt stops the level. The handler stays installed until
	// explore returns, so an interrupt while the result is printed is
	// caught too.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	res, err := exhaustShowing(head, stderr, t, o, ctx.Done(), *ef.out)
	var hang *explore.HangError
	if errors.As(err, &hang) {
		return reportHang(stdout, stderr, f, t, *ef.out, hang)
	}
	if err != nil {
		return f.fail(stderr, err)
	}
	if *ef.asJSON {
		return exploreJSONOut(stdout, stderr, f, t, *ef.out, res)
	}
	return printExplore(stdout, stderr, f, t, *ef.out, res, *ef.trace)
}

// exhaustShowing runs the exploration until stop is closed, showing its
// progress on stderr and each level's line on head. A counterexample is
// written into dir the moment a worker finds one, so not even a kill loses
// it (the level's first by position replaces it at the end, with as many
// faults).
func exhaustShowing(head, stderr io.Writer, t explore.Target, o explore.ExhaustOptions, stop <-chan struct{}, dir string) (explore.ExhaustResult, error) {
	prog := newExploreProgress(stderr)
	o.OnProgress = prog.show
	o.OnLevel = func(l explore.Level) { prog.clear(); printLevel(head, l, prog.since()) }
	o.Stop = stop
	o.OnFound = func(x explore.Outcome) { _, _ = explore.WriteRepro(dir, explore.NewRepro(t, x)) }
	res, err := explore.Exhaust(t, o)
	prog.clear()
	return res, err
}

// printExplore prints explore's result and, with a counterexample, its
// plan, verdict, timeline (all of it with full) and repro written into
// dir: exit 1 with one, else 0 (130 when interrupted).
func printExplore(stdout, stderr io.Writer, f *cmdFlags, t explore.Target, dir string, res explore.ExhaustResult, full bool) int {
	fmt.Fprintf(stdout, "explore: %s\n", res)
	x := res.Counterexample
	if x == nil && res.Interrupted {
		return exitInterrupted
	}
	if x == nil {
		return exitOK
	}
	printPlan(stdout, *x)
	printOutcome(stdout, *x, t.Variant.Name)
	if err := printTimeline(stdout, *x, full); err != nil {
		return f.fail(stderr, err)
	}
	return writeExploreRepro(stdout, stderr, f, t, dir, *x, "counterexample")
}

// writeExploreRepro writes x's repro into dir and prints its path and
// replay line: exit 1, or 2 if it cannot be written.
func writeExploreRepro(stdout, stderr io.Writer, f *cmdFlags, t explore.Target, dir string, x explore.Outcome, what string) int {
	path, err := explore.WriteRepro(dir, explore.NewRepro(t, x))
	if err != nil {
		return f.fail(stderr, fmt.Errorf("cannot write the %s's repro: %v", what, err))
	}
	fmt.Fprintf(stdout, "repro:   %s\nreplay:  %s\n", path, explore.ReplayFileCommand(path))
	return exitViolation
}

// exploreTarget is the target and options the flags ask for.
func exploreTarget(f *cmdFlags, cfg sim.Config, name, beyond string, k, budget int) (explore.Target, explore.ExhaustOptions, error) {
	var o explore.ExhaustOptions
	v, err := variants.Lookup(name)
	if err != nil {
		return explore.Target{}, o, err
	}
	switch {
	case k < 0 || k > 6:
		return explore.Target{}, o, fmt.Errorf("-max-faults %d is not between 0 and 6 (each fault multiplies the schedules by hundreds)", k)
	case budget < 1:
		return explore.Target{}, o, fmt.Errorf("-max-schedules %d must be at least 1", budget)
	}
	t := explore.Target{Variant: v, Config: cfg, Classes: []faults.Class{faults.ClassAll}}
	if t.Beyond, err = parseBeyond(beyond, t); err != nil {
		return explore.Target{}, o, err
	}
	if err := t.Validate(); err != nil {
		return explore.Target{}, o, err
	}
	return t, explore.ExhaustOptions{MaxFaults: k, MaxSchedules: budget, Check: model.DefaultCheckOptions()}, nil
}

// narrowMenu gives o the menu of t's envelope narrowed to the -faults
// classes, which t records (a repro keeps them).
func narrowMenu(t *explore.Target, o *explore.ExhaustOptions, list string) error {
	classes, err := faults.ParseClasses(list)
	if err != nil {
		return err
	}
	t.Classes = classes
	menu := explore.MenuFor(*t).Within(classes)
	o.Menu = &menu
	return nil
}

// exploreJSON is what explore -json prints.
type exploreJSON struct {
	Variant   string          `json:"variant"`
	MaxFaults int             `json:"max_faults"`
	Menu      string          `json:"menu"`
	Levels    []explore.Level `json:"levels"`
	Complete  bool            `json:"complete"`
	// Refused is how many schedules the next level would have had when
	// -max-schedules stopped the exploration; Interrupted, that Ctrl-C did.
	Refused     int            `json:"refused,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"`
	Failed      bool           `json:"failed"`
	Faults      int            `json:"faults,omitempty"` // the counterexample's
	Verdict     *model.Verdict `json:"verdict,omitempty"`
	TraceHash   string         `json:"trace_hash,omitempty"`
	Repro       string         `json:"repro,omitempty"`
	Replay      string         `json:"replay,omitempty"`
}

// exploreJSONOut prints res as JSON, writing the counterexample's repro
// into dir first: exit 1 with one, else 0 (130 when interrupted).
func exploreJSONOut(stdout, stderr io.Writer, f *cmdFlags, t explore.Target, dir string, res explore.ExhaustResult) int {
	j := exploreJSON{Variant: t.Variant.Name, MaxFaults: res.MaxFaults, Menu: res.Menu.String(), Levels: orEmpty(res.Levels),
		Complete: res.Complete, Refused: res.Refused, Interrupted: res.Interrupted}
	code := exitOK
	if res.Interrupted {
		code = exitInterrupted
	}
	if x := res.Counterexample; x != nil {
		path, err := explore.WriteRepro(dir, explore.NewRepro(t, *x))
		if err != nil {
			return f.fail(stderr, fmt.Errorf("cannot write the counterexample's repro: %v", err))
		}
		j.Failed, j.Verdict, j.TraceHash = true, &x.Verdict, fmt.Sprintf("%016x", x.Hash)
		j.Faults, j.Repro, j.Replay = x.Schedule.Faults(), path, explore.ReplayFileCommand(path)
		code = exitViolation
	}
	if err := writeJSON(stdout, j); err != nil {
		return f.fail(stderr, err)
	}
	return code
}

// describeExplore is explore's header: what, in which world, with what.
func describeExplore(w io.Writer, t explore.Target, m explore.Menu, k int) {
	c := t.Config
	fmt.Fprintf(w, "variant: %s   explore: every schedule with at most %s, breadth-first\n", t.Variant.Name, reports.Plural(k, "fault"))
	fmt.Fprintf(w, "config:  %s\n", describeConfig(c, nil))
	fmt.Fprintf(w, "envelope: %s\n", t.Variant.Envelope)
	where := "inside the envelope"
	if len(t.Beyond) > 0 {
		where = "breaking " + rawList(t.Beyond)
	}
	fmt.Fprintf(w, "faults:  %s (%s)\n", m, where)
}

func printLevel(w io.Writer, l explore.Level, took time.Duration) {
	fmt.Fprintf(w, "k=%d: %s, %s distinct, %s failing (%s)\n", l.Faults, reports.Plural(l.Schedules, "schedule"), reports.Thousands(l.Distinct), reports.Thousands(l.Failing), took.Round(time.Millisecond))
}

// exploreProgress shows how far a level has got, on stderr: a line
// redrawn at most ten times a second on a terminal, one every five
// seconds otherwise.
type exploreProgress struct {
	w     io.Writer
	tty   bool
	start time.Time
	level time.Time
	last  time.Time
	drawn bool
}

func newExploreProgress(w io.Writer) *exploreProgress {
	now := time.Now()
	return &exploreProgress{w: w, tty: isTerminal(w), start: now, level: now, last: now}
}

func (p *exploreProgress) show(done, total int) {
	now := time.Now()
	switch {
	case p.tty && now.Sub(p.last) >= barInterval:
		fmt.Fprintf(p.w, "\rexplore: %s of %s schedules, %s ", reports.Thousands(done), reports.Thousands(total), now.Sub(p.start).Round(time.Second))
		p.drawn = true
	case !p.tty && now.Sub(p.last) >= lineInterval:
		fmt.Fprintf(p.w, "explore: %s of %s schedules, %s\n", reports.Thousands(done), reports.Thousands(total), now.Sub(p.start).Round(time.Second))
	default:
		return
	}
	p.last = now
}

func (p *exploreProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// since is how long the level just explored took, and starts the next.
func (p *exploreProgress) since() time.Duration {
	now := time.Now()
	d := now.Sub(p.level)
	p.level = now
	return d
}

// rawList is the assumptions as -beyond takes them.
func rawList[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ",")
}

// reportHang prints and writes the finding of a schedule whose run hung:
// the process cannot stop that run, so explore ends here, and the replay
// line runs it isolated, where the hang is a finding again.
func reportHang(stdout, stderr io.Writer, f *cmdFlags, t explore.Target, dir string, hang *explore.HangError) int {
	fmt.Fprintf(stdout, "explore: HANG, a bug of %s: %s\n", t.Variant.Name, hang)
	return writeExploreRepro(stdout, stderr, f, t, dir, hang.Outcome, "hang")
}
