package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/explore"
)

// The checks every subcommand makes of its input before it runs anything,
// against the limits of sim/seedrun's limits.go: each bad input is one
// sentence and exit 2, never a silent default.

// listHints say, per list flag, what to give instead of an empty list.
var listHints = map[string]string{
	"faults":   "give fault classes, none for a fault-free world, or all",
	"beyond":   "name assumptions of the envelope, or all, or leave -beyond out to draw inside it",
	"world":    "give fields of the world, all, or none",
	"changes":  "name world changes, or leave -changes out",
	"variants": "name variants, or leave -variants out to compare them all",
}

// valueHints say, per flag that takes one name or file, what it needs.
var valueHints = map[string]string{
	"variant": "name a variant (locksim variants lists them)",
	"only":    "name a fix (locksim variants -v lists them)",
	"plan":    "give a plan file",
	"config":  "give a config file",
	"seeds":   "give FROM..TO, or leave -seeds out",
	"shard":   "give K/N, or leave -shard out",
	"kind":    "name a violation kind, or leave -kind out",
	"n":       "give a count of seeds",
}

// checkGivenValues refuses a flag of listHints or valueHints given empty,
// and a list with an empty name in it ("loss,,crash"): an empty list is
// not "all", and an empty name is not the default.
func checkGivenValues(f *cmdFlags) error {
	var err error
	f.Visit(func(fl *flag.Flag) {
		if err != nil {
			return
		}
		v := fl.Value.String()
		if hint, ok := listHints[fl.Name]; ok {
			err = checkList(fl.Name, v, hint)
		} else if hint, ok := valueHints[fl.Name]; ok && strings.TrimSpace(v) == "" {
			err = fmt.Errorf("-%s is empty: %s", fl.Name, hint)
		}
	})
	return err
}

// checkList checks one list flag's value.
func checkList(name, v, hint string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("-%s is empty: %s", name, hint)
	}
	for _, x := range strings.Split(v, ",") {
		if strings.TrimSpace(x) == "" {
			return fmt.Errorf("-%s %q has an empty name in it", name, v)
		}
	}
	return nil
}

// checkParallel checks -parallel: 0 (every core) up to explore.MaxParallel.
func checkParallel(n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("-parallel %d is negative: give a number of workers, or 0 for every core", n)
	case n > explore.MaxParallel:
		return fmt.Errorf("-parallel %d is more than %d workers", n, explore.MaxParallel)
	}
	return nil
}

// checkSlowLink refuses a slow link's host or node (-slow-host,
// -slow-node, or the -config file's) without the slow link, -slow-extra:
// they would be ignored.
func checkSlowLink(c sim.Config) error {
	switch {
	case c.SlowExtra > 0:
		return nil
	case c.SlowHost != 0:
		return fmt.Errorf("-slow-host %d places a slow link, and there is none: give -slow-extra too", c.SlowHost)
	case c.SlowNode != 0:
		return fmt.Errorf("-slow-node %d places a slow link, and there is none: give -slow-extra too", c.SlowNode)
	}
	return nil
}

// readInput reads a file given on the command line, what it is called in
// errors, refusing a directory and more than max bytes.
func readInput(path, what string, max int) ([]byte, error) {
	data, err := explore.ReadFile(path, what, max)
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("cannot read %s %s: %v", what, path, pathErr.Err)
	}
	return data, err
}

// checkOutDir checks, before anything runs, that files can be written
// into dir (flag names it in the error); "" is none.
func checkOutDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	if err := checkWritable(dir); err != nil {
		return fmt.Errorf("-%s %s cannot hold the files written there: %v", flag, dir, err)
	}
	return nil
}

// checkOutFile checks, before anything runs, that the file path can be
// written (flag names it in the error); "" is none.
func checkOutFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("-%s %s is a directory: give a file", flag, path)
	}
	if err := checkWritable(filepath.Dir(path)); err != nil {
		return fmt.Errorf("-%s %s cannot be written: %v", flag, path, err)
	}
	return nil
}

// checkSeeds checks a selection of count seeds from seed from: at least
// one, and none past the largest seed.
func checkSeeds(from uint64, count int) error {
	if count == 0 {
		return errors.New("no seeds to run: give -n 1 or more")
	}
	return explore.CheckSeeds(from, count)
}

// checkMinimizeInput checks minimize's flags and where the minimal repro
// of file goes: -out, or next to file.
func checkMinimizeInput(f *cmdFlags, file, out string, maxRuns int) error {
	if maxRuns < 1 {
		return fmt.Errorf("-max-runs %d must be at least 1", maxRuns)
	}
	if err := checkGivenValues(f); err != nil {
		return err
	}
	if out != "" {
		return checkOutDir("out", out)
	}
	if err := checkWritable(filepath.Dir(file)); err != nil {
		return fmt.Errorf("the minimal repro goes next to %s, and %s cannot hold it (%v): give -out DIR", file, filepath.Dir(file), err)
	}
	return nil
}

// checkExploreInput checks explore's flags, -parallel and -out.
func checkExploreInput(f *cmdFlags, parallel int, out string) error {
	return cmp.Or(checkGivenValues(f), checkParallel(parallel), checkOutDir("out", out))
}

// checkCompareInput checks compare's flags, -parallel, -costs and the
// reports' paths.
func checkCompareInput(f *cmdFlags, parallel, costs int, out compareOutputs, dir string) error {
	if err := cmp.Or(checkGivenValues(f), checkParallel(parallel)); err != nil {
		return err
	}
	switch {
	case costs < 0:
		return fmt.Errorf("-costs %d is negative: give seeds per assumption, or 0 for no cost table", costs)
	case costs > maxBareCount:
		return fmt.Errorf("-costs %d is more than %d seeds per assumption", costs, maxBareCount)
	}
	return cmp.Or(checkOutFile("md", out.md), checkOutFile("html", out.html), checkOutDir("out", dir))
}

// checkMergeInputs refuses standard input named twice: the second would
// read nothing.
func checkMergeInputs(paths []string) error {
	if n := len(slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return p != "-" })); n > 1 {
		return errors.New("- (standard input) is given twice: it can be read once")
	}
	return nil
}

// checkReplayOutputs checks replay's -html-model and -html.
func checkReplayOutputs(model, html string) error {
	if model != "" && model != "mutex" && model != "counter" {
		return fmt.Errorf("-html-model %q is not mutex or counter", model)
	}
	return checkOutFile("html", html)
}
