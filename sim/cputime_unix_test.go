//go:build unix

package sim

import "syscall"

// cpuClock measures the CPU time this process uses (all threads, user and
// system), for benchmark rates that hold up on a loaded machine.
type cpuClock struct{ start int64 }

func startCPU() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) seconds() float64 { return float64(processCPU()-c.start) / 1e9 }

func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
