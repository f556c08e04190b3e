//go:build linux

package explore

import "syscall"

// hardMemoryLimit caps the worker's writable memory (RLIMIT_DATA): past
// it the runtime cannot map more heap and dies with "out of memory",
// which the coordinator reads as a memory finding. The watchdog
// (watchMemory) usually stops the worker first; on one P it runs only when
// the allocating goroutine is preempted, and an allocation loop can pass
// the soft limit tenfold by then. Half the budget again plus 256 MiB
// leaves room for the runtime's own mappings.
func hardMemoryLimit(limit int64) {
	hard := uint64(limit + limit/2 + 256<<20)
	syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: hard, Max: hard})
}
