//go:build !linux

package main

import "os"

// terminalWidth is unknown outside linux: list wraps at COLUMNS or
// proseWidth there.
func terminalWidth(*os.File) (int, bool) { return 0, false }
