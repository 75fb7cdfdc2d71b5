//go:build lootdtest

package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// LOOTD_TEST_NOFILE=N sets the test build's RLIMIT_NOFILE (soft and hard)
// to N before anything runs, so a test can give lootd a limit of its
// choosing while the test process keeps a higher one for its clients.
func init() {
	v := os.Getenv("LOOTD_TEST_NOFILE")
	if v == "" {
		return
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err == nil {
		err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
	}
	if err != nil {
		panic(fmt.Sprintf("LOOTD_TEST_NOFILE=%q: %v", v, err))
	}
}
