// Package cli is the locksim command as a library: Main runs it with your
// own lock variants registered beside the built-in ones, so every
// subcommand (run, sweep, replay, minimize, explore, compare) reaches your
// lock as it reaches locksim's. Call it from a main package of your own:
//
//	package main
//
//	import (
//		"github.com/locksim/locksim/cli"
//		"example.com/you/mylock"
//	)
//
//	func main() { cli.Main(mylock.Variant()) }
//
// then, in your module, go run ./cmd/mylocksim compare -variants mylock,corrected.
// The commands it prints to replay a failure name your program.
//
// Every subcommand is a thin parser over package explore, writes through the
// stdout and stderr it is given (so tests can call Run), and returns the
// process's exit code.
package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
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

// commandTable is every subcommand, in the order help lists them. It is a
// function, not a variable, because help reads it: a variable would be an
// initialization cycle (help → commands → help).
func commandTable() []command {
	return []command{
		{"run", "run one scenario and check it", runCmd},
		{"sweep", "run many seeds on every core, stop at the first bug", sweepCmd},
		{"replay", "re-run a repro file (or a seed) and check the verdict still holds", replayCmd},
		{"minimize", "shrink a repro's fault plan while the same violation still occurs", minimizeCmd},
		{"explore", "run every schedule of a small world with at most k faults: the fewest-fault counterexample, or a bounded result", exploreCmd},
		{"variants", "list the registered lock algorithms", variantsCmd},
		{"help", "explain a subcommand", helpCmd},
		{"compare", "run every variant under every fault class; print the matrix", compareCmd},
		{"merge", "combine the -json outputs of sweep -shard K/N into one result", mergeCmd},
		{"version", "print locksim's version, its module's and Go's", versionCmd},
	}
}

// Main runs the locksim command on os.Args with the variants vs registered
// beside the built-in ones (variants.Register, after them in every list),
// and exits with its code. A name already registered, or an empty one, is
// a programming error and panics.
func Main(vs ...algorithm.Variant) {
	for _, v := range vs {
		variants.Register(v, variants.Place{Family: variants.Added})
	}
	explore.TuneGC() // a sweep's garbage is short-lived: collect less often
	seedrun.CommandPrefix = commandPrefix()
	os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
}

// commandPrefix is how this program was started, for the commands it
// prints: go run and its main package when go run built it (go run
// ./cmd/locksim, or your own program's), else the name it was started by.
func commandPrefix() string {
	exe, err := os.Executable()
	if err != nil || builtByGoRun(exe, os.Getenv("GOCACHE")) {
		bi, _ := debug.ReadBuildInfo()
		return goRunPrefix(bi)
	}
	return os.Args[0]
}

// goRunPrefix is the go run command that builds the main package bi
// describes: by its directory in the main module (go run ./cmd/mylocksim),
// else by import path. locksim's own when bi says nothing of use (a test
// binary has no main package to name).
func goRunPrefix(bi *debug.BuildInfo) string {
	if bi == nil || bi.Path == "" || strings.HasSuffix(bi.Path, ".test") || bi.Path == "command-line-arguments" {
		return explore.DefaultCommandPrefix
	}
	switch rel, ok := strings.CutPrefix(bi.Path, bi.Main.Path); {
	case bi.Main.Path != "" && ok && rel == "":
		return "go run ."
	case bi.Main.Path != "" && ok && strings.HasPrefix(rel, "/"):
		return "go run ." + rel
	}
	return "go run " + bi.Path
}

// builtByGoRun reports whether exe is an executable go run built: in a
// go-build work directory, or (since Go 1.24 go run caches what it builds)
// in the build cache, gocache or, unset, its default place.
func builtByGoRun(exe, gocache string) bool {
	sep := string(filepath.Separator)
	if strings.Contains(exe, sep+"go-build") {
		return true
	}
	if gocache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return false
		}
		gocache = filepath.Join(dir, "go-build")
	}
	return gocache != "off" && strings.HasPrefix(exe, filepath.Clean(gocache)+sep)
}

// Run dispatches args (without the program's name) to a subcommand and
// returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return quickCompare(stdout, stderr) // the README's main job
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		return helpCmd(nil, stdout, stderr)
	case "-version", "--version":
		return versionCmd(nil, stdout, stderr)
	}
	if c, ok := lookupCommand(name); ok {
		return c.run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "locksim: unknown subcommand %q (known: %s); see locksim help.\n", name, commandNames())
	return exitUsage
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commandTable() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func commandNames() string {
	s := ""
	for i, c := range commandTable() {
		if i > 0 {
			s += ", "
		}
		s += c.name
	}
	return s
}
