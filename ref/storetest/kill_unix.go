//go:build unix

package storetest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// canKill: this platform has SIGKILL.
const canKill = true

func killProcess(p *os.Process) error { return p.Signal(syscall.SIGKILL) }

// killedBySIGKILL reports whether cmd.Wait's error says SIGKILL ended it.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
