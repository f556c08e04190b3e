package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
)

const overview = `locksim runs distributed lock algorithms in a deterministic simulated world
(virtual DHT nodes, clock, lossy network, crashes, skew, pauses) and breaks them.
Every run is a pure function of (variant, config, seed, fault plan), so a failure
found once can be replayed, minimised and shown.

usage: locksim <subcommand> [flags]

subcommands:
`

const helpFooter = `
Run "locksim help <subcommand>" or "locksim <subcommand> -h" for its flags and examples.

Seeds draw their faults from every class (-faults all) and stay inside the variant's
envelope: what it assumes of the world (locksim variants -v). A violation of a property
the variant promises, inside the envelope, is a bug; one that came only after the run
broke an assumption (-beyond breaks them on purpose) is expected, and says which.

exit codes: 0 no bug, 1 a bug found (with -strict: any violation), 2 bad usage or input.

environment: GOGC, if set, is used as given; otherwise locksim runs at GOGC=400,
since a sweep's garbage dies with each seed (docs/PERFORMANCE.md).

find, replay, minimise:
  locksim sweep -variant original -faults pause -n 200 -out repros
  locksim replay repros/original-seed-3.json
  locksim minimize repros/original-seed-3.json
what breaking an assumption costs:
  locksim sweep -variant corrected -beyond all -n 2000 -keep-going
`

func helpCmd(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		fmt.Fprint(stdout, overview)
		for _, c := range commandTable() {
			fmt.Fprintf(stdout, "  %-10s %s\n", c.name, c.summary)
		}
		fmt.Fprint(stdout, helpFooter)
		writeLimits(stdout)
		writeFlagTable(stdout)
		return exitOK
	case 1:
		if args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			return helpCmd(nil, stdout, stderr)
		}
		if c, ok := lookupCommand(args[0]); ok {
			return c.run([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "locksim help: unknown subcommand %q (known: %s).\n", args[0], commandNames())
		return exitUsage
	default:
		fmt.Fprintf(stderr, "locksim help: give at most one subcommand.\n")
		return exitUsage
	}
}

// sharedFlags are the flags several subcommands take, with the one meaning
// each has in all of them.
var sharedFlags = []struct{ name, arg, meaning string }{
	{"variant", "NAME", "the lock, by name (locksim variants); compare takes -variants A,B"},
	{"seed", "N", "one seed"},
	{"n", "COUNT", "how many seeds, from seed 1: 1000, 10k, 5M"},
	{"seeds", "FROM..TO", "which seeds: FROM..TO, or FROM.. with -n"},
	{"faults", "CLASS,...", "fault classes, comma-separated"},
	{"beyond", "ASSUMPTION,...", "assumptions of the envelope to break on purpose"},
	{"world", "FIELD,...", "fields of the world each seed draws; none: the flags' own"},
	{"config", "FILE", "a JSON world; scenario flags given override it"},
	{"json", "", "JSON on stdout instead of text (the header goes to stderr)"},
	{"html", "FILE", "write the run's page (or the matrix's) to FILE"},
	{"out", "DIR", "the directory the files go into (repros, or compare's reports)"},
	{"trace", "", "the whole timeline, not only the part around the violation"},
	{"parallel", "N", "workers (0: every core)"},
	{"strict", "", "fail on every violation, not only the variant's bugs"},
}

// flagUse is one flag of one subcommand as its -h text shows it: the
// subcommand, and the value the flag takes ("" for a switch).
type flagUse struct{ command, value string }

// flagUses reads every subcommand's -h text: by flag name, the subcommands
// that take it, in commandTable's order.
func flagUses() map[string][]flagUse {
	uses := map[string][]flagUse{}
	for _, c := range commandTable() {
		if c.name == "help" {
			continue
		}
		var b bytes.Buffer
		c.run([]string{"-h"}, &b, io.Discard)
		_, list, _ := strings.Cut(b.String(), "\nflags:\n")
		for _, line := range strings.Split(list, "\n") {
			name, ok := strings.CutPrefix(line, "  -")
			if !ok {
				continue
			}
			name, value, _ := strings.Cut(name, " ")
			uses[name] = append(uses[name], flagUse{c.name, value})
		}
	}
	return uses
}

// writeFlagTable writes the shared flags, each with its meaning and the
// subcommands that take it, read from their own -h texts.
func writeFlagTable(w io.Writer) {
	uses := flagUses()
	fmt.Fprintf(w, "\nflags that several subcommands take, with one meaning in all of them:\n")
	for _, sf := range sharedFlags {
		us := uses[sf.name]
		if len(us) == 0 {
			continue
		}
		names := make([]string, len(us))
		for i, u := range us {
			names[i] = u.command
		}
		flag := "-" + sf.name
		if sf.arg != "" {
			flag += " " + sf.arg
		}
		fmt.Fprintf(w, "  %-17s %s\n  %-17s   (%s)\n", flag, sf.meaning, "", strings.Join(names, ", "))
	}
}

// writeLimits says what locksim refuses as too much (sim/seedrun's limits.go
// lists them all, with why).
func writeLimits(w io.Writer) {
	fmt.Fprintf(w, "\nlimits: a run lasts at most %s of virtual time, with at most %d client threads and %s of\n"+
		"client time (clients × duration); any other span is at most %s; a plan holds at most\n"+
		"%s events in at most %s, a repro file at most %s; -parallel is at most %d.\n"+
		"More is bad input (exit 2).\n",
		envelope.Span(faults.MaxDuration), faults.MaxClients, envelope.Span(faults.MaxClientTime), envelope.Span(faults.MaxSpan),
		reports.Thousands(faults.MaxEvents), faults.Bytes(faults.MaxPlanBytes), faults.Bytes(explore.MaxReproBytes), explore.MaxParallel)
}
