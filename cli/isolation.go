package cli

import (
	"fmt"
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
	f.BoolVar(&i.on, "isolate", true, "run seeds in worker processes, so a variant that crashes, hangs or exhausts memory is a finding (kinds crash, hang, memory) and not the end of the command; -isolate=false runs them in this process")
	f.DurationVar(&i.hangAfter, "hang-after", explore.DefaultHangAfter, "with -isolate: wall-clock time a worker may take over a chunk of seeds (at most 8) before it counts as hung")
	f.StringVar(&i.memory, "memory-limit", formatBytes(explore.DefaultMemoryLimit), "with -isolate: heap a worker may hold, such as 512MiB or 2GiB, before it counts as out of memory")
}

// isolation is what the flags ask for: nil without -isolate.
func (i *isolationFlags) isolation() (*explore.Isolation, error) {
	if !i.on {
		return nil, nil
	}
	if i.hangAfter <= 0 {
		return nil, fmt.Errorf("-hang-after %s is not a positive duration", i.hangAfter)
	}
	mem, err := parseBytes(i.memory)
	if err != nil {
		return nil, fmt.Errorf("-memory-limit: %v", err)
	}
	if mem < 64<<20 {
		return nil, fmt.Errorf("-memory-limit %s is under 64MiB, too little to run a seed", i.memory)
	}
	return &explore.Isolation{HangAfter: i.hangAfter, MemoryLimit: mem}, nil
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
