package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/sim/explore"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the locksim command inside scripts.
func TestMain(m *testing.M) {
	if os.Getenv(asLocksimEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"locksim": func() {
			explore.CommandPrefix = commandPrefix() // as main does
			os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
		},
	})
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
