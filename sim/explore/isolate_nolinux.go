//go:build !linux

package explore

// hardMemoryLimit: without RLIMIT_DATA, the watchdog alone stops a worker.
func hardMemoryLimit(int64) {}
