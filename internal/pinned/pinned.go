// Package pinned starts child processes whose parent-death signal
// (SysProcAttr.Pdeathsig) means what it says: the harness died.
package pinned

import (
	"os/exec"
	"runtime"
)

// Start starts cmd from a goroutine locked to its OS thread that stays
// alive until the process exits, and returns a channel that receives
// cmd.Wait's result once. The parent-death signal fires when the *thread*
// that forked the child exits, and Go may retire threads; a thread pinned
// by a goroutine blocked in Wait is never retired.
func Start(cmd *exec.Cmd) (<-chan error, error) {
	done := make(chan error, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
