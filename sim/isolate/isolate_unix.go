//go:build unix

package isolate

import (
	"os"
	"os/exec"
	"syscall"
)

// detach puts a worker in a process group of its own, so a Ctrl-C at the
// terminal reaches the coordinator only: it stops the sweep and ends the
// workers itself, and a worker killed by the signal is not taken for a
// crash.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killedBy names the signal that killed a worker from outside (one that
// ends a process without its saying anything: kill, term, hangup,
// interrupt), if one did.
func killedBy(ps *os.ProcessState) (string, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	switch ws.Signal() {
	case syscall.SIGKILL:
		return "SIGKILL", true
	case syscall.SIGTERM:
		return "SIGTERM", true
	case syscall.SIGHUP:
		return "SIGHUP", true
	case syscall.SIGINT:
		return "SIGINT", true
	}
	return "", false
}
