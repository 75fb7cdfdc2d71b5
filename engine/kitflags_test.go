package engine

import (
	"flag"
	"testing"
)

// A test binary that imports props and lootprops, or a second copy of the
// engine, registers the kit's flags once: a second registration must not
// panic (flag.FlagSet.Var panics on a redefined name).
func TestRegisterFlagsTwiceDoesNotPanic(t *testing.T) {
	fs := flag.NewFlagSet("kitflags", flag.ContinueOnError)
	registerFlags(fs)
	registerFlags(fs)
	for _, name := range []string{flagN, flagSeed} {
		if fs.Lookup(name) == nil {
			t.Errorf("-%s is not registered (go test -run '^TestRegisterFlagsTwiceDoesNotPanic$' ./engine/)", name)
		}
	}
}

// The test binary has the flags: go test ./engine/ -onceproof.n=... parses.
func TestKitFlagsAreRegisteredInTestBinaries(t *testing.T) {
	for _, name := range []string{flagN, flagSeed} {
		if flag.Lookup(name) == nil {
			t.Errorf("-%s is not registered in this test binary (go test -run '^TestKitFlagsAreRegisteredInTestBinaries$' ./engine/)", name)
		}
	}
}
