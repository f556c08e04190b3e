//go:build !unix

package isolate

import (
	"os"
	"os/exec"
)

func detach(*exec.Cmd) {}

// killedBy: only Unix says which signal ended a process.
func killedBy(*os.ProcessState) (string, bool) { return "", false }
