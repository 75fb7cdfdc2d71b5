//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports fi's owner and whether it is this process's effective
// user (the owner of every file the process creates).
func ownedByMe(fi fs.FileInfo) (uid int, mine bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		// Every unix Lstat fills a Stat_t; without one there is no owner
		// to compare, and the symlink checks still hold.
		return -1, true
	}
	return int(st.Uid), int(st.Uid) == os.Geteuid()
}
