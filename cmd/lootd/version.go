package main

import (
	"fmt"
	"io"

	"github.com/onceproof/onceproof/internal/buildinfo"
	"github.com/onceproof/onceproof/internal/redact"
)

// versionCmd is `lootd version` (also -version): one line, from the
// binary's build information (internal/buildinfo says what each field is).
func versionCmd(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		// Redacted as every lootd error is: a stray argument may be an
		// address pasted in the wrong place.
		return redact.Error(fmt.Errorf("%w: lootd version: unexpected argument %q", errUsage, args[0]), args...)
	}
	_, err := fmt.Fprintln(stdout, buildinfo.Read("lootd"))
	return err
}
