//go:build linux

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth is f's width in columns if f is a terminal (the
// TIOCGWINSZ ioctl, as stty size asks it).
func terminalWidth(f *os.File) (int, bool) {
	var ws struct{ Row, Col, X, Y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	return int(ws.Col), errno == 0 && ws.Col > 0
}
