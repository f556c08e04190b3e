package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim/explore"
)

// isolationFlags are the flags of the commands that run seeds in worker
// processes (explore.Isolation).
type isolationFlags struct {
	on        bool
	hangAfter time.Duration
	memory    string
}

func (i *isolationFlags) register(f *cmdFlags) {
	f.BoolVar(&i.on, "isolate", true, "run seeds (and schedules, and minimisation's candidates) in worker processes, so a variant that crashes, hangs, exhausts memory or calls its Env from a goroutine of its own is a finding (kinds crash, hang, memory, misuse) and not the end of the command; -isolate=false runs them in this process")
	f.DurationVar(&i.hangAfter, "hang-after", explore.DefaultHangAfter, "wall-clock time one run (a seed, or a schedule) may take in its worker before it counts as hung; with -isolate=false only explore watches it, and stops there")
	f.StringVar(&i.memory, "memory-limit", formatBytes(explore.DefaultMemoryLimit), "with -isolate: heap a worker may hold, such as 512MiB or 2GiB, before it counts as out of memory")
}

// budget is -hang-after, for explore's watchdog without -isolate.
func (i *isolationFlags) budget() time.Duration { return i.hangAfter }

// isolation is what the flags ask for: nil without -isolate.
func (i *isolationFlags) isolation() (*explore.Isolation, error) {
	if i.hangAfter <= 0 {
		return nil, fmt.Errorf("-hang-after %s is not a positive duration", i.hangAfter)
	}
	mem, err := parseBytes(i.memory) // checked with -isolate=false too: a typo is never ignored
	if err != nil {
		return nil, fmt.Errorf("-memory-limit: %v", err)
	}
	if mem < 64<<20 {
		return nil, fmt.Errorf("-memory-limit %s is under 64MiB, too little to run a seed", i.memory)
	}
	if !i.on {
		return nil, nil
	}
	return &explore.Isolation{HangAfter: i.hangAfter, MemoryLimit: mem}, nil
}

// minimizeFinding prints minimisation's answer when the run to minimise
// is its worker's finding (crash, hang, memory) or a misuse of the Env
// (explore.FindingError): there is nothing to shrink. Exit 1, with the
// line that replays file, the repro minimised; false for any other err.
func minimizeFinding(stdout io.Writer, variant, file string, err error) (int, bool) {
	var fe *explore.FindingError
	if !errors.As(err, &fe) {
		return 0, false
	}
	kind := fe.Outcome.Verdict.Violations[0].Kind
	fmt.Fprintf(stdout, "minimize: %s, a bug of %s, with nothing to shrink: the lock's own code fails, whatever the faults\n", strings.ToUpper(string(kind)), variant)
	printOutcome(stdout, fe.Outcome, variant)
	fmt.Fprintf(stdout, "replay:  %s\n", explore.ReplayFileCommand(file))
	return exitViolation, true
}

var byteUnits = []struct {
	suffix string
	size   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// parseBytes reads a size with a unit: 512MiB, 2GiB, 1GB.
func parseBytes(s string) (int64, error) {
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n <= 0 || n > (1<<62)/u.size {
				return 0, fmt.Errorf("%q is not a positive whole number of %s", s, u.suffix)
			}
			return n * u.size, nil
		}
	}
	return 0, fmt.Errorf("%q has no unit: give one of GiB, MiB, KiB, GB, MB, KB, B (such as 2GiB)", s)
}

func formatBytes(n int64) string {
	for _, u := range byteUnits {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
