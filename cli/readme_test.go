package cli

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// readmeExample is a fenced block of README.md that shows a command and
// what it prints: "$ go run ./cmd/locksim ARGS", then output lines, "..."
// where the README leaves lines out.
type readmeExample struct {
	args []string
	want []string
}

// readmeExamples are README.md's examples, in order.
func readmeExamples(t *testing.T) []readmeExample {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeExample
	blocks := strings.Split(string(data), "```")
	for i := 1; i < len(blocks); i += 2 {
		lines := strings.Split(strings.Trim(blocks[i], "\n"), "\n")
		cmd, ok := strings.CutPrefix(lines[0], "$ go run ./cmd/locksim ")
		if !ok {
			continue
		}
		out = append(out, readmeExample{args: strings.Fields(cmd), want: lines[1:]})
	}
	return out
}

// volatile are the parts of an output line that depend on the machine:
// wall-clock time and speed.
var volatile = regexp.MustCompile(`[0-9.]+(ms|s|µs), [0-9]+ seeds/s`)

// TestReadmeExamples runs README.md's worked examples, in order, in one
// directory, and checks that every line the README shows is printed, in
// that order (but for wall-clock figures): the README cannot drift from
// what locksim prints.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's examples")
	}
	examples := readmeExamples(t)
	if len(examples) < 3 {
		t.Fatalf("found %d examples in README.md, want the sweep, replay and minimise ones", len(examples))
	}
	dir := t.TempDir()
	for _, ex := range examples {
		// A process of its own, as the README runs it: sweeps isolate
		// their seeds in workers, which re-run this binary.
		cmd := exec.Command(os.Args[0], ex.args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), asLocksimEnv+"=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run() // the exit code is the command's verdict; the README shows the output
		got := strings.Split(volatile.ReplaceAllString(stdout.String()+stderr.String(), "T"), "\n")
		at := 0
		for _, want := range ex.want {
			if want == "..." || strings.TrimSpace(want) == "..." {
				continue
			}
			want = volatile.ReplaceAllString(want, "T")
			found := false
			for ; at < len(got); at++ {
				if got[at] == want {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("locksim %s: the README shows a line it no longer prints (or not in that order):\n  %s\nit printed:\n%s",
					strings.Join(ex.args, " "), want, stdout.String()+stderr.String())
				break
			}
		}
	}
}
