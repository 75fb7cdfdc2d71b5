//go:build !unix

package storetest

import (
	"errors"
	"os"
)

// canKill: without SIGKILL RunCrash skips.
const canKill = false

func killProcess(p *os.Process) error { return errors.New("storetest: no SIGKILL on this platform") }

func killedBySIGKILL(err error) bool { return false }
