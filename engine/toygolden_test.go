package engine_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/toy/ from the code")

// checkGolden compares got with the golden file path (under
// testdata/toy/), or rewrites it under -update. A stale golden fails with
// the first line that differs and the one command that rewrites it.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	path = filepath.Join("testdata", "toy", path)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; to write it: %s", err, rewrite(t))
	}
	if string(want) == got {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return ls[i]
		}
		return "<end of file>"
	}
	t.Errorf("%s is stale: line %d\n got %s\nwant %s\nreview the change, then rewrite it: %s", path, i+1, line(gl), line(wl), rewrite(t))
}

// rewrite is the one command that rewrites the goldens of t's top-level
// test.
func rewrite(t *testing.T) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return fmt.Sprintf("cd %s && go test -run '^%s$' -update .", dir, regexp.QuoteMeta(top))
}
