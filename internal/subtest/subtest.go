// Package subtest is what the conformance kits share about their subtests:
// the -run pattern that selects exactly one, the line a failing check
// prints to rerun it, and the teeth check (a kit's check must fail on a
// mutant built to break it, observed from a child process, since a failing
// subtest cannot be watched from inside the run it fails).
package subtest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Pattern anchors every level of a subtest name, so -run selects exactly
// it (and not every subtest whose name contains it).
func Pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// LogReproduce registers a cleanup that, if t failed, logs the command
// that reruns exactly t.
func LogReproduce(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: go test -race -count=1 -run '%s' <this package>", Pattern(t.Name()))
		}
	})
}

// MustFail reruns the test binary as a child process with env=mutant,
// running only subtest check of the top-level test child, and fails t
// unless that subtest failed: the kit's check still has teeth against the
// mutation. pkg names the package for the reproduce line.
func MustFail(t *testing.T, env, mutant, child, check, pkg string) {
	t.Helper()
	run := Pattern(child + "/" + check)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+mutant)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--- FAIL: "+child+"/"+check) {
		t.Fatalf("check %s passed with mutation %q: the suite lost its teeth.\nreproduce: %s=%s go test -count=1 -v -run '%s' %s\nchild output:\n%s",
			check, mutant, env, mutant, run, pkg, out)
	}
}
