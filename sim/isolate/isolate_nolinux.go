//go:build !linux

package isolate

import "os/exec"

// hardMemoryLimit: without RLIMIT_DATA, the watchdog alone stops a worker.
func hardMemoryLimit(int64) {}

// usePdeathsig: only Linux has a parent-death signal; elsewhere the
// lifeline pipe alone ends an orphaned worker.
var usePdeathsig = false

// startCmd starts a worker; it ends itself when this process is gone (its
// lifeline pipe, watchParent).
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
