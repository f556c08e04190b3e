package cli

import (
	"flag"
	"fmt"
	"github.com/locksim/locksim/sim/cause"
	"io"

	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// replayAbout is replay's -h text.
const replayAbout = "Re-runs a failure: from a repro file (variant, config, seed, plan and the recorded verdict),\n" +
	"or from a seed whose plan is redrawn from -faults. With a file it checks that the verdict\n" +
	"and trace hash equal the recorded ones and says clearly when they do not (and when the\n" +
	"file came from another locksim version). Judges each violation against the variant's\n" +
	"envelope, as run and sweep do, and prints the timeline around the first violation;\n" +
	"-html writes the run's timeline page (holds, faults, the violation on the first screen) and,\n" +
	"beside it, porcupine's view of the linearizability check with the plan's faults as annotations.\n" +
	"Exit 0: no bug now; 1: a bug (with -strict: any violation), reproduced or not; 2: bad\n" +
	"usage or input."

// replayFlags are replay's flags: the scenario's (for a seed), the seed,
// what to print and write, and isolation's.
type replayFlags struct {
	sc                 scenarioFlags
	iso                isolationFlags
	seed               *uint64
	trace, asJSON, why *bool
	htmlOut, htmlModel *string
}

// register defines replay's flags on f, the scenario's first.
func (rf *replayFlags) register(f *cmdFlags) {
	rf.sc.register(f)
	rf.seed = f.Uint64("seed", 1, "seed to replay when no repro file is given")
	rf.trace = f.Bool("trace", false, "print the full timeline")
	rf.asJSON = f.Bool("json", false, "print the verdict (with variant, seed, config, plan, and for a repro file whether it reproduced) as JSON, as run -json does")
	rf.why = f.Bool("why", false, "attribute a failing run to its causes: replay it with each fix the variant's family knows (or, for a lock without fixes, each world change) and say which remove each violation")
	rf.htmlOut = f.String("html", "", "write the run's timeline page to FILE, and porcupine's view of its linearizability check beside it (FILE-porcupine.html)")
	rf.htmlModel = f.String("html-model", "", "porcupine's model for -html: mutex or counter (default: counter for a lost update, else mutex)")
	rf.iso.register(f)
}

func replayCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("replay", "locksim replay FILE [-strict] [-trace] [-json] [-why] [-html OUT.html]\n       locksim replay -variant NAME -seed N [-faults CLASS,...] [-beyond ASSUMPTION,...] [scenario flags] [-trace] [-json] [-why] [-html OUT.html]",
		replayAbout,
		"locksim replay repros/original-seed-2.json",
		"locksim replay repros/original-seed-2-min.json -trace -html seed2.html",
		"locksim replay -variant original -seed 7 -faults threads -duration 3m")
	var rf replayFlags
	rf.register(f)
	pos, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	iso, err := rf.iso.isolation()
	if err != nil {
		return f.fail(stderr, err)
	}
	if err := checkReplayOutputs(*rf.htmlModel, *rf.htmlOut); err != nil {
		return f.fail(stderr, err)
	}
	rp, err := chooseReplay(f, &rf.sc, pos, *rf.seed, iso)
	if err != nil {
		return f.fail(stderr, err)
	}
	if *rf.asJSON {
		return replayJSON(f, rp, rf.sc.replayCommand(rp.target, rp.seed), stdout, stderr)
	}
	rp.describe(stdout)
	rp.opt.Check.Every = true // every violation is printed, the first of each kind compared

	o, err := rp.run()
	if err != nil {
		return f.fail(stderr, err)
	}
	return rf.report(f, rp, o, stdout, stderr)
}

// report prints the replayed run: its plan and verdict, whether a repro
// file reproduced, the timeline, the -html pages, the -why attribution and
// the line that replays it. Exit 1 on a failure, else 0, or 2 when the
// pages cannot be written or the attribution fails.
func (rf *replayFlags) report(f *cmdFlags, rp replayed, o explore.Outcome, stdout, stderr io.Writer) int {
	printPlan(stdout, o)
	printOutcome(stdout, o, rp.target.Variant.Name)
	if rp.repro != nil {
		printComparison(stdout, *rp.repro, o)
	}
	if err := printTimeline(stdout, o, *rf.trace); err != nil {
		return f.fail(stderr, err)
	}
	replay := rf.sc.replayCommand(rp.target, rp.seed)
	if rp.repro != nil {
		replay = explore.ReplayFileCommand(rp.file)
	}
	if *rf.htmlOut != "" {
		if err := writeReplayHTML(*rf.htmlOut, o, *rf.htmlModel, rp, replay); err != nil {
			return f.fail(stderr, err)
		}
		fmt.Fprintf(stdout, "html:    %s (porcupine's: %s)\n", *rf.htmlOut, explore.PorcupinePath(*rf.htmlOut))
	}
	if *rf.why && o.Failed() {
		a, err := cause.Attribute(rp.target, o, cause.Options{})
		if err != nil {
			return f.fail(stderr, err)
		}
		printAttribution(stdout, a)
	}
	if !o.Verdict.OK() {
		fmt.Fprintf(stdout, "replay:  %s\n", replay)
	}
	if o.Failed() {
		return exitViolation
	}
	return exitOK
}

// describe prints what is replayed: the repro file, the target, the seed
// and its world.
func (r replayed) describe(stdout io.Writer) {
	if r.repro != nil {
		fmt.Fprintf(stdout, "repro:   %s (recorded by %s)\n", r.file, r.repro.Version)
	}
	world := ""
	if r.repro != nil && len(r.repro.World) > 0 {
		world = envelope.DescribeWorld(r.repro.Config, r.repro.World) + " (the seed drew these; the file keeps them)"
	}
	describeTargetIn(stdout, r.target, world)
	fmt.Fprintf(stdout, "seed:    %d\n", r.seed)
	if r.repro == nil {
		printSeedWorld(stdout, r.target, r.seed)
	}
}

// writeReplayHTML writes porcupine's page of the replayed run, titled with
// its variant, seed, first violation and replay command.
func writeReplayHTML(path string, o explore.Outcome, model string, rp replayed, replay string) error {
	info := reports.PageInfo{Variant: rp.target.Variant.Name, Seed: rp.seed, Replay: replay}
	if len(o.Verdict.Violations) > 0 {
		info.Violation = o.Verdict.Violations[0].String()
	}
	if err := explore.WritePages(path, o, model, info); err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	return nil
}

// chooseReplay is what the arguments ask to replay: a repro file (with the
// check options its verdict was recorded with), or a seed of the scenario
// flags.
func chooseReplay(f *cmdFlags, sc *scenarioFlags, pos []string, seed uint64, iso *explore.Isolation) (replayed, error) {
	if err := checkGivenValues(f); err != nil {
		return replayed{}, err
	}
	opt, err := sc.runOptions()
	if err != nil {
		return replayed{}, err
	}
	switch {
	case len(pos) > 1:
		return replayed{}, fmt.Errorf("give one repro file, not %d", len(pos))
	case len(pos) == 1:
		if flag := firstScenarioFlag(f); flag != "" {
			return replayed{}, fmt.Errorf("give a repro file or -%s, not both", flag)
		}
		r, err := explore.ReadRepro(pos[0], variants.Lookup)
		if err != nil {
			return replayed{}, err
		}
		if !f.set("liveness-bound") {
			opt.Check = r.CheckOptions() // the bound the verdict was recorded with
		}
		opt.Schedule = r.Schedule // an explored schedule decides its run; nil: the seed does
		return replayed{file: pos[0], repro: &r, target: r.Target(), seed: r.Seed, opt: opt, iso: iso}, nil
	}
	t, err := sc.target(f)
	if err != nil {
		return replayed{}, err
	}
	return replayed{target: t, seed: seed, opt: opt, iso: iso}, nil
}

// replayed is what to re-run: a repro file's scenario or a seed's.
type replayed struct {
	file   string
	repro  *explore.Repro // nil when replaying a seed
	target explore.Target
	seed   uint64
	opt    explore.Options
	iso    *explore.Isolation // nil: in this process
}

func (rp replayed) run() (explore.Outcome, error) {
	opt := rp.opt
	opt.Keep = true
	if rp.repro != nil {
		return explore.Run(rp.target, rp.seed, &rp.repro.Plan, opt, rp.iso)
	}
	return explore.Run(rp.target, rp.seed, nil, opt, rp.iso)
}

// printComparison says whether the replay matches the recorded verdict and
// trace hash, and what may explain a difference.
func printComparison(w io.Writer, r explore.Repro, o explore.Outcome) {
	hash := fmt.Sprintf("%016x", o.Hash)
	// By structure (kinds, times, clients, metrics), not by story: a
	// reworded story is the same finding.
	sameVerdict := r.Verdict.SameAs(o.Verdict)
	switch {
	case sameVerdict && hash == r.TraceHash:
		fmt.Fprintf(w, "reproduced: the verdict and the trace hash (%s) equal the recorded ones\n", hash)
	case sameVerdict:
		fmt.Fprintf(w, "reproduced, but the run took another path: trace hash %s, recorded %s\n", hash, r.TraceHash)
	case hash == r.TraceHash && r.Verdict.SameViolations(o.Verdict):
		fmt.Fprintf(w, "reproduced: the same run (trace hash %s) and the same violations; the metrics differ from the recorded ones (another version counted them, or the file was edited):\n", hash)
		printMetrics(indent{w}, r.Verdict.Metrics)
	default:
		fmt.Fprintf(w, "NOT REPRODUCED: the verdict differs from the recorded one (trace hash %s, recorded %s)\n", hash, r.TraceHash)
		fmt.Fprintf(w, "recorded verdict:\n")
		printVerdict(indent{w}, r.Verdict)
	}
	if r.Version != explore.Version && !(sameVerdict && hash == r.TraceHash) {
		fmt.Fprintf(w, "note: the repro was recorded by %s and this is %s; any difference may come from the version change\n",
			r.Version, explore.Version)
	}
}

// firstScenarioFlag is the first flag given that chooses a scenario (which
// a repro file already fixes), or "".
func firstScenarioFlag(f *cmdFlags) string {
	name := ""
	f.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "trace", "why", "json", "html", "html-model", "strict", "liveness-bound", "isolate", "hang-after", "memory-limit":
		default:
			if name == "" {
				name = fl.Name
			}
		}
	})
	return name
}

// indent prefixes every write with two spaces (callers write whole lines).
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	if _, err := i.w.Write(append([]byte("  "), p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// replayJSON is replay -json: the run's verdict as run -json prints it,
// and whether a repro file reproduced.
func replayJSON(f *cmdFlags, rp replayed, line string, stdout, stderr io.Writer) int {
	rp.opt.Check.Every = true
	o, err := rp.run()
	if err != nil {
		return f.fail(stderr, err)
	}
	out := runJSON{Variant: rp.target.Variant.Name, Seed: o.Seed, Classes: rp.target.Classes, Beyond: rp.target.Beyond,
		Config: o.Config, World: rp.target.World, Plan: o.Plan, TraceHash: fmt.Sprintf("%016x", o.Hash), Verdict: o.Verdict,
		Findings: orEmpty(o.Findings), Breaches: orEmpty(o.Breaches), Failed: o.Failed()}
	if rp.repro != nil {
		out.World = rp.repro.World
		out.Replay = explore.ReplayFileCommand(rp.file)
		switch {
		case !rp.repro.Verdict.SameViolations(o.Verdict):
			out.Reproduced = "no"
		case out.TraceHash == rp.repro.TraceHash:
			out.Reproduced = "yes"
		default:
			out.Reproduced = "verdict"
		}
	} else {
		out.Replay = line
	}
	if err := writeJSON(stdout, out); err != nil {
		return f.fail(stderr, err)
	}
	if o.Failed() {
		return exitViolation
	}
	return exitOK
}
