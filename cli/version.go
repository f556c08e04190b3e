package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/locksim/locksim/sim/explore"
)

// versionCmd prints the version repro files record (explore.Version), the
// module's version and VCS revision as the build recorded them, and Go's.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("version", "locksim version",
		"Prints the version locksim records in repro files and journals (a replay by another\n"+
			"version says so), the module's version and commit as the build recorded them, and Go's.",
		"locksim version")
	if code, done := f.parseNone(args, stdout, stderr); done {
		return code
	}
	module, revision := "(unknown)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		module = info.Main.Path + " " + info.Main.Version
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					revision += " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(stdout, "%s\nmodule:   %s\n", explore.Version, module)
	if revision != "" {
		fmt.Fprintf(stdout, "revision: %s\n", revision)
	}
	fmt.Fprintf(stdout, "go:       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
