package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersionIsOneLineAndExitsZero(t *testing.T) {
	for _, arg := range []string{"version", "-version", "--version"} {
		code, out, errs := runCLI(arg)
		if code != exitOK || errs != "" || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "onceproof ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("onceproof %s: exit %d, stdout %q, stderr %q; want 0 and one line starting \"onceproof \" with %s", arg, code, out, errs, runtime.Version())
		}
	}
	code, _, errs := runCLI("version", "extra")
	if code != exitBadUse || !strings.Contains(errs, "version takes no arguments") {
		t.Errorf("onceproof version extra: exit %d, stderr %q; want 2 naming the stray argument", code, errs)
	}
	if code, out, _ := runCLI("help", "version"); code != exitOK || !strings.Contains(out, "vcs.revision") {
		t.Errorf("onceproof help version: exit %d:\n%s", code, out)
	}
}
