//go:build linux

package isolate

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

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

// usePdeathsig: workers get SIGKILL when their coordinator dies (a test
// turns it off to see the lifeline pipe do it alone).
var usePdeathsig = true

// spawner starts every worker from one goroutine locked to its thread for
// good. Linux sends a child its parent-death signal when the *thread* that
// started it ends, not the process, and Go ends threads behind the
// program's back (a goroutine that exits locked to its thread takes the
// thread with it): a worker started from such a thread would be killed
// while its coordinator lives. This thread never ends before the process.
var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startCmd starts a worker that dies with this process (SIGKILL), however
// it ends.
func startCmd(cmd *exec.Cmd) error {
	if !usePdeathsig {
		return cmd.Start()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: see spawner
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd, done}
	return <-done
}
