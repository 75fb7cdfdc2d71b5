package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func TestVersionIsOneLineAndExitsZero(t *testing.T) {
	none := func(string) string { return "" }
	for _, arg := range []string{"version", "-version", "--version"} {
		var out, errOut bytes.Buffer
		code := run([]string{arg}, none, &out, &errOut)
		if code != 0 || errOut.Len() != 0 || strings.Count(out.String(), "\n") != 1 || !strings.HasPrefix(out.String(), "lootd ") || !strings.Contains(out.String(), runtime.Version()) {
			t.Errorf("lootd %s: exit %d, stdout %q, stderr %q; want 0 and one line starting \"lootd \" with %s", arg, code, out.String(), errOut.String(), runtime.Version())
		}
	}
	// A stray argument is refused, and quoted redacted: it may be an
	// address pasted in the wrong place.
	const secret = "postgres://lootd:s3cret-pw@db.internal:5432/loot"
	var out, errOut bytes.Buffer
	code := run([]string{"version", secret}, none, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "lootd version: unexpected argument") || strings.Contains(out.String()+errOut.String(), "s3cret-pw") {
		t.Errorf("lootd version %s: exit %d, stdout %q, stderr %q; want 2, the argument named, its password not printed", secret, code, out.String(), errOut.String())
	}
}
