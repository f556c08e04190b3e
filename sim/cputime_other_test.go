//go:build !unix

package sim

import "time"

// cpuClock falls back to wall time where getrusage is missing.
type cpuClock struct{ start time.Time }

func startCPU() cpuClock { return cpuClock{time.Now()} }

func (c cpuClock) seconds() float64 { return time.Since(c.start).Seconds() }
