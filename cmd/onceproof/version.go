package main

import (
	"fmt"
	"io"

	"github.com/onceproof/onceproof/internal/buildinfo"
)

// versionCmd is `version` (also -version): one line, from the binary's
// build information (internal/buildinfo says what each field is).
func versionCmd(args []string, stdout io.Writer) (int, error) {
	if len(args) > 0 {
		return 0, badf("version takes no arguments, got %q", args)
	}
	fmt.Fprintln(stdout, buildinfo.Read("onceproof"))
	return exitOK, nil
}
