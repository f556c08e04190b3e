package cli

import (
	"fmt"
	"io"
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
