package cli

import (
	"errors"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
	"github.com/locksim/locksim/variants"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the locksim command inside scripts.
func TestMain(m *testing.M) {
	switch os.Getenv(asLocksimEnv) {
	case "1":
		os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
	case "yours":
		Main(yourVariant())
	}
	testscript.Main(m, map[string]func(){
		"locksim": func() {
			seedrun.CommandPrefix = commandPrefix() // as main does
			os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
		},
	})
}

// yourVariant is a lock of a user's own, as Main registers it: the
// original under another name.
func yourVariant() algorithm.Variant {
	v, err := variants.Lookup("original")
	if err != nil {
		panic(err)
	}
	v.Name, v.Summary = "yours", "a user's own lock (the original, renamed)"
	return v
}

// asLocksimEnv makes the test binary the locksim command, for tests that
// start it as a process of its own (and its isolated workers).
const asLocksimEnv = "LOCKSIM_TEST_AS_COMMAND"

// TestScripts runs testdata/script/*.txtar: each script is a CLI session
// with the expected output and exit code of every command.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": exits, "sleep": sleep},
	})
}

// exits N CMD ARGS... runs CMD and fails unless it exits with status N;
// its stdout and stderr are then checked as after exec.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			ts.Fatalf("exits: %v", err)
		}
		got = exitErr.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// sleep DURATION waits, for a command started in the background to get
// going before it is signalled.
func sleep(ts *testscript.TestScript, neg bool, args []string) {
	d, err := time.ParseDuration(strings.Join(args, ""))
	if neg || len(args) != 1 || err != nil {
		ts.Fatalf("usage: sleep DURATION")
	}
	time.Sleep(d)
}

// Replay lines say go run ./cmd/locksim whenever go run built the
// program: in a go-build work directory, or in the build cache wherever
// GOCACHE puts it.
func TestBuiltByGoRun(t *testing.T) {
	cases := []struct {
		exe, gocache string
		want         bool
	}{
		{"/tmp/go-build123/b001/exe/locksim", "", true},
		{"/cache/gocache/3f/3fab-d/locksim", "/cache/gocache", true},
		{"/cache/gocache/3f/3fab-d/locksim", "/cache/gocache/", true},
		{"/usr/local/bin/locksim", "/cache/gocache", false},
		{"/cache/gocache2/locksim", "/cache/gocache", false},
		{"/home/me/go/bin/locksim", "off", false},
	}
	for _, c := range cases {
		if got := builtByGoRun(c.exe, c.gocache); got != c.want {
			t.Errorf("builtByGoRun(%q, GOCACHE=%q) = %v, want %v", c.exe, c.gocache, got, c.want)
		}
	}
}

// A program of your own that calls Main with your lock lists it after the
// built-in ones, runs it, and prints replay lines that name it.
func TestMainRunsYourVariants(t *testing.T) {
	run := func(args ...string) (string, int) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), asLocksimEnv+"=yours")
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run("variants")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || !strings.HasPrefix(lines[len(lines)-1], "yours ") {
		t.Fatalf("locksim variants (exit %d) does not list yours last:\n%s", code, out)
	}
	out, code = run("sweep", "-variant", "yours", "-n", "200", "-faults", "threads", "-out", t.TempDir())
	if code != 1 || !strings.Contains(out, "replay -variant yours") {
		t.Fatalf("a sweep of yours exited %d, want 1 with a replay line that names it:\n%s", code, out)
	}
}

// go run prints your program's own go run line, not locksim's.
func TestGoRunPrefixNamesTheMainPackage(t *testing.T) {
	cases := []struct {
		path, module, want string
	}{
		{"github.com/locksim/locksim/cmd/locksim", "github.com/locksim/locksim", "go run ./cmd/locksim"},
		{"example.com/me/lock/cmd/locksim-mine", "example.com/me/lock", "go run ./cmd/locksim-mine"},
		{"example.com/me/lock", "example.com/me/lock", "go run ."},
		{"example.com/other/tool", "example.com/me/lock", "go run example.com/other/tool"},
		{"github.com/locksim/locksim/cli.test", "github.com/locksim/locksim", explore.DefaultCommandPrefix},
	}
	for _, c := range cases {
		bi := &debug.BuildInfo{Path: c.path, Main: debug.Module{Path: c.module}}
		if got := goRunPrefix(bi); got != c.want {
			t.Errorf("goRunPrefix(%s in %s) = %q, want %q", c.path, c.module, got, c.want)
		}
	}
	if got := goRunPrefix(nil); got != explore.DefaultCommandPrefix {
		t.Errorf("goRunPrefix(nil) = %q", got)
	}
}

// One vocabulary: a flag that several subcommands take takes the same kind
// of value in all of them (a -json that is a switch in one is a switch in
// every one), and the flags help lists as shared are ones they have.
func TestOneFlagVocabulary(t *testing.T) {
	uses := flagUses()
	for name, us := range uses {
		for _, u := range us[1:] {
			if u.value != us[0].value {
				t.Errorf("-%s takes %q in %s but %q in %s", name, us[0].value, us[0].command, u.value, u.command)
			}
		}
	}
	for _, sf := range sharedFlags {
		if len(uses[sf.name]) < 2 {
			t.Errorf("help lists -%s as shared, but only %v take it", sf.name, uses[sf.name])
		}
		if (sf.arg == "") != (uses[sf.name][0].value == "") {
			t.Errorf("help shows -%s with %q, but it takes %q", sf.name, sf.arg, uses[sf.name][0].value)
		}
	}
	for _, gone := range []string{"fixed-world"} {
		if len(uses[gone]) > 0 {
			t.Errorf("-%s is back in %v; its meaning is -world none", gone, uses[gone])
		}
	}
}
