//go:build unix

// Package cputime measures the CPU time the process uses (all threads, user
// and system), for benchmark rates that hold up on a loaded machine. It is
// for benchmarks only: nothing in a simulation may read any clock.
package cputime

import "syscall"

// Clock is a started CPU-time measurement.
type Clock struct{ start int64 }

// Start begins a measurement.
func Start() Clock { return Clock{process()} }

// Seconds is the CPU time used since Start.
func (c Clock) Seconds() float64 { return float64(process()-c.start) / 1e9 }

func process() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
