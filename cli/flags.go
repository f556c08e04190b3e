package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// cmdFlags is a subcommand's flag set with the text -h prints around the
// flag list: what the command does and examples to copy.
type cmdFlags struct {
	*flag.FlagSet
	name     string // "run"
	synopsis string // "locksim run [flags]"
	about    string // a paragraph
	examples []string
	// renamed are flags this command no longer has, by name, with what
	// replaces them: an old command line gets one sentence that says so.
	renamed map[string]string
}

func newFlags(name, synopsis, about string, examples ...string) *cmdFlags {
	fs := flag.NewFlagSet("locksim "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by parse, in one sentence
	return &cmdFlags{FlagSet: fs, name: name, synopsis: synopsis, about: about, examples: examples}
}

// usage writes the -h text.
func (f *cmdFlags) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", f.synopsis, f.about)
	if len(f.examples) > 0 {
		fmt.Fprintf(w, "\nexamples:\n")
		for _, e := range f.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintf(w, "\nflags:\n")
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// parseNone parses args for a command that takes no positional argument.
func (f *cmdFlags) parseNone(args []string, stdout, stderr io.Writer) (code int, done bool) {
	pos, code, done := f.parse(args, stdout, stderr)
	if !done && len(pos) > 0 {
		return f.fail(stderr, fmt.Errorf("unexpected argument %q", pos[0])), true
	}
	return code, done
}

// parse parses args, letting flags follow positional arguments
// ("replay FILE -html out.html"). done is true when the command must stop
// and return code: 0 after -h, 2 after a bad flag.
func (f *cmdFlags) parse(args []string, stdout, stderr io.Writer) (positional []string, code int, done bool) {
	for {
		err := f.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			f.usage(stdout)
			return nil, exitOK, true
		}
		if err != nil {
			return nil, f.fail(stderr, f.explain(err)), true
		}
		args = f.Args()
		if len(args) == 0 {
			return positional, 0, false
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// explain is a parse error in words, saying what replaced a renamed flag.
func (f *cmdFlags) explain(err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		if now, ok := f.renamed[name]; ok {
			return fmt.Errorf("-%s is now %s (the README lists what changed)", name, now)
		}
	}
	return fmt.Errorf("%v (see locksim %s -h)", err, f.name)
}

// set reports whether the flag was given on the command line.
func (f *cmdFlags) set(name string) bool {
	found := false
	f.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// fail reports a bad usage or input in one sentence and returns exit code 2.
func (f *cmdFlags) fail(stderr io.Writer, err error) int {
	// The library's errors name their function ("sweep: ..."): said once.
	msg := strings.TrimPrefix(err.Error(), f.name+": ")
	fmt.Fprintf(stderr, "locksim %s: %s\n", f.name, sentence(msg))
	return exitUsage
}

// sentence trims a message to one line ending in a full stop.
func sentence(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
