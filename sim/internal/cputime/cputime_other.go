//go:build !unix

// Package cputime measures the CPU time the process uses, for benchmarks.
// Without getrusage it falls back to wall time.
package cputime

import "time"

// Clock is a started measurement.
type Clock struct{ start time.Time }

// Start begins a measurement.
func Start() Clock { return Clock{time.Now()} }

// Seconds is the wall time since Start (CPU time is not available here).
func (c Clock) Seconds() float64 { return time.Since(c.start).Seconds() }
