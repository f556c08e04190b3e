//go:build unix

package explore

import (
	"os/exec"
	"syscall"
)

// detach puts a worker in a process group of its own, so a Ctrl-C at the
// terminal reaches the coordinator only: it stops the sweep and ends the
// workers itself, and a worker killed by the signal is not taken for a
// crash.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
