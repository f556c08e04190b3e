package cli

import (
	"cmp"
	"fmt"
	"io"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
)

// runJSON is what run -json prints.
type runJSON struct {
	Variant string                 `json:"variant"`
	Seed    uint64                 `json:"seed"`
	Classes []faults.Class         `json:"classes"`
	Beyond  []algorithm.Assumption `json:"beyond,omitempty"`
	Config  sim.Config             `json:"config"` // the world the seed ran in
	// World lists the fields of Config the seed drew.
	World     []envelope.WorldField `json:"world,omitempty"`
	Plan      faults.Plan           `json:"plan"`
	TraceHash string                `json:"trace_hash"`
	Verdict   model.Verdict         `json:"verdict"`
	// Findings judge the verdict's violations against the envelope;
	// Breaches are the assumptions the run broke.
	Findings []explore.Finding `json:"findings"`
	Breaches []envelope.Breach `json:"breaches"`
	Failed   bool              `json:"failed"`
	Replay   string            `json:"replay,omitempty"`
	Repro    string            `json:"repro,omitempty"`
	// Reproduced, for replay of a repro file: the same violations and the
	// same trace hash as recorded ("verdict" when only the violations
	// are the same, "no" when they differ).
	Reproduced string `json:"reproduced,omitempty"`
}

// runFlags are run's flags: the scenario's, the seed, what to print and
// write, and isolation's.
type runFlags struct {
	sc            scenarioFlags
	iso           isolationFlags
	seed          *uint64
	trace, asJSON *bool
	out, htmlOut  *string
}

// register defines run's flags on f, the scenario's first.
func (rf *runFlags) register(f *cmdFlags) {
	rf.sc.register(f)
	rf.seed = f.Uint64("seed", 1, "seed: draws the fault plan and every random choice of the run")
	rf.trace = f.Bool("trace", false, "print the full timeline, not only the part around the violation")
	rf.asJSON = f.Bool("json", false, "print the verdict (with variant, seed, config, plan) as JSON")
	rf.out = f.String("out", "", "write a repro file into this directory on a violation (default: none, unless only a file can replay the run: then "+defaultReproDir+")")
	rf.htmlOut = f.String("html", "", "write the run's timeline page to FILE, and porcupine's view of its linearizability check beside it (FILE-porcupine.html), as replay -html does")
	rf.iso.register(f)
}

// options are the target, run options and isolation the flags ask for,
// checked in the order the errors are reported.
func (rf *runFlags) options(f *cmdFlags) (explore.Target, explore.Options, *explore.Isolation, error) {
	iso, err := rf.iso.isolation()
	if err != nil {
		return explore.Target{}, explore.Options{}, nil, err
	}
	t, opt, err := rf.sc.checked(f)
	if err == nil {
		err = cmp.Or(checkOutDir("out", *rf.out), checkOutFile("html", *rf.htmlOut))
	}
	return t, opt, iso, err
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("run", "locksim run [-variant NAME] [-seed N] [-faults CLASS,...] [-beyond ASSUMPTION,...|all] [-strict] [scenario flags]",
		"Runs one scenario, a pure function of (variant, config, seed, fault plan): the seed draws\n"+
			"the plan from the fault classes (all of them unless -faults says otherwise), inside the\n"+
			"variant's envelope unless -beyond breaks some of its assumptions on purpose. Prints the\n"+
			"verdict, each violation judged against the envelope, and key metrics and, on a violation,\n"+
			"the timeline around it and the command that replays it. A violation of a promised\n"+
			"property inside the envelope is a bug; one that came only after the run broke an\n"+
			"assumption is expected, and says which; one of a property the variant does not promise\n"+
			"is information. Exit 0: no bug; 1: a bug (with -strict: any violation); 2: bad usage.",
		"locksim run -variant original -seed 7 -faults threads",
		"locksim run -variant corrected -seed 3 -faults skew,pause -duration 3m -trace",
		"locksim run -variant corrected -seed 82 -faults jump -beyond clock-jumps   # what breaking an assumption costs",
		"locksim run -variant fenced -seed 1 -faults all -json",
		"locksim run -config world.json -hosts 5   # -hosts overrides the file")
	var rf runFlags
	rf.register(f)
	if code, done := f.parseNone(args, stdout, stderr); done {
		return code
	}
	t, opt, iso, err := rf.options(f)
	if err != nil {
		return f.fail(stderr, err)
	}
	head := stdout
	if *rf.asJSON {
		head = stderr // stdout is for the JSON alone
	}
	describeTarget(head, t)
	fmt.Fprintf(head, "seed:    %d\n", *rf.seed)
	printSeedWorld(head, t, *rf.seed)

	opt.Keep, opt.Check.Every = true, true
	o, err := explore.Run(t, *rf.seed, nil, opt, iso)
	if err != nil {
		return f.fail(stderr, err)
	}
	return rf.report(f, t, o, head, stdout, stderr)
}

// report saves the repro of a failed run, writes the -html pages (named
// on head) and prints the run, as JSON with -json: exit 1 on a bug (with
// -strict: any violation), else 0, or 2 when something cannot be written.
func (rf *runFlags) report(f *cmdFlags, t explore.Target, o explore.Outcome, head, stdout, stderr io.Writer) int {
	var replay, path string
	var err error
	if o.Failed() {
		if replay, path, err = rf.sc.saveFailure(t, o, *rf.out); err != nil {
			return f.fail(stderr, fmt.Errorf("cannot write the repro file: %v", err))
		}
	}
	if *rf.htmlOut != "" {
		info := reports.PageInfo{Variant: t.Variant.Name, Seed: o.Seed, Replay: replay}
		if len(o.Verdict.Violations) > 0 {
			info.Violation = o.Verdict.Violations[0].String()
		}
		if err := explore.WritePages(*rf.htmlOut, o, "", info); err != nil {
			return f.fail(stderr, fmt.Errorf("cannot write %s: %v", *rf.htmlOut, err))
		}
		fmt.Fprintf(head, "html:    %s (porcupine's: %s)\n", *rf.htmlOut, explore.PorcupinePath(*rf.htmlOut))
	}
	if *rf.asJSON {
		err = writeJSON(stdout, runJSON{Variant: t.Variant.Name, Seed: o.Seed, Classes: t.Classes, Beyond: t.Beyond,
			Config: o.Config, World: t.World, Plan: o.Plan, TraceHash: fmt.Sprintf("%016x", o.Hash), Verdict: o.Verdict,
			Findings: orEmpty(o.Findings), Breaches: orEmpty(o.Breaches), Failed: o.Failed(), Replay: replay, Repro: path})
	} else {
		err = printRun(stdout, o, t.Variant.Name, *rf.trace, replay, path)
	}
	if err != nil {
		return f.fail(stderr, err)
	}
	if o.Failed() {
		return exitViolation
	}
	return exitOK
}

// printRun is run's human output after the header.
func printRun(w io.Writer, o explore.Outcome, variant string, full bool, replay, path string) error {
	printPlan(w, o)
	printOutcome(w, o, variant)
	if err := printTimeline(w, o, full); err != nil {
		return err
	}
	if path != "" {
		fmt.Fprintf(w, "repro:   %s\n", path)
	}
	if replay != "" {
		fmt.Fprintf(w, "replay:  %s\n", replay)
	}
	return nil
}

// printSeedWorld is the world seed draws, when the target draws one.
func printSeedWorld(w io.Writer, t explore.Target, seed uint64) {
	if len(t.World) == 0 {
		return
	}
	cfg, how := t.At(seed).Config, "drawn by the seed"
	if len(t.Changes) > 0 {
		// The world as it runs: a change of the world (-changes, -only)
		// applies after the draw.
		plan := t.PlanFor(seed)
		for _, c := range t.Changes {
			if changed, _, _, _, err := envelope.ChangeWorld(c, cfg, plan, t.Variant); err == nil && changed != cfg {
				cfg, how = changed, how+", then "+string(c)
			}
		}
	}
	fmt.Fprintf(w, "world:   %s (%s)\n", envelope.DescribeWorld(cfg, t.World), how)
}
