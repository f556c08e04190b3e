// Command locksim runs lock algorithms in a deterministic simulated world
// and breaks them: run one scenario, sweep many seeds, replay and minimise a
// failure. Every subcommand is a thin parser over package explore, writes
// through the stdout and stderr it is given (so tests can call it), and
// returns the process's exit code.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/locksim/locksim/sim/explore"
)

// Exit codes, the same for every subcommand.
const (
	exitOK        = 0 // no violation
	exitViolation = 1 // a violation was found (or reproduced)
	exitUsage     = 2 // bad usage or input: one sentence on stderr
)

// command is a subcommand: its name, one line for help, and its entry point.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands are listed by help in this order. They are filled in by init to
// break the cycle help → commands → help; another file may append to them
// from its own init (compare.go adds "compare"), whichever init runs first.
var commands []command

func init() {
	commands = append([]command{
		{"run", "run one scenario and check it", runCmd},
		{"sweep", "run many seeds on every core, stop at the first bug", sweepCmd},
		{"replay", "re-run a repro file (or a seed) and check the verdict still holds", replayCmd},
		{"minimize", "shrink a repro's fault plan while the same violation still occurs", minimizeCmd},
		{"variants", "list the registered lock algorithms", variantsCmd},
		{"help", "explain a subcommand", helpCmd},
	}, commands...)
}

// noArgs is what a bare `locksim` does. It prints help for now; compare.go
// replaces it (from init) with a quick comparison of the variants.
var noArgs = func(stdout, stderr io.Writer) int {
	return helpCmd(nil, stdout, stderr)
}

func main() {
	explore.TuneGC() // a sweep's garbage is short-lived: collect less often
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main dispatches args to a subcommand and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return noArgs(stdout, stderr)
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		return helpCmd(nil, stdout, stderr)
	}
	if c, ok := lookupCommand(name); ok {
		return c.run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "locksim: unknown subcommand %q (known: %s); see locksim help.\n", name, commandNames())
	return exitUsage
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func commandNames() string {
	s := ""
	for i, c := range commands {
		if i > 0 {
			s += ", "
		}
		s += c.name
	}
	return s
}
