package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The attacks of issue 20 finding 1, each planted by "another local user"
// in a directory a matrix run writes to: the run must refuse (exit 2, one
// line) or write only inside the directory, and nothing outside it may
// change: not a file's content, existence or mtime, not a directory's
// entries or mtime.

// victim is a directory outside every results directory, holding files a
// hostile plant points at.
type victim struct {
	dir   string
	files []string // absolute paths of the files in dir
}

// victimEpoch is the mtime every victim entry is set to: a write or an
// entry added or removed moves it, so even a write of the same bytes shows.
var victimEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

func newVictim(t *testing.T) victim {
	t.Helper()
	v := victim{dir: t.TempDir()}
	// victim.md is named like a counterexample, so a manifest entry
	// counterexamples/victim.md reaches it through a symlinked
	// counterexamples/.
	for _, name := range []string{"victim.txt", "victim.md"} {
		p := filepath.Join(v.dir, name)
		if err := os.WriteFile(p, []byte("keep me: "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		v.files = append(v.files, p)
	}
	for _, p := range append(slices.Clone(v.files), v.dir) {
		if err := os.Chtimes(p, victimEpoch, victimEpoch); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// snapshot is every entry under v.dir with its mode, mtime and content,
// except out and what is in it (a case may put the run's directory inside
// the victim's, to reach it with ../).
func (v victim) snapshot(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(v.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == out {
			return fs.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %s", p, fi.Mode(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		if fi.Mode().IsRegular() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// plantManifest writes a manifest in dir listing entries, as a run would
// have (or as an attacker forges it).
func plantManifest(t *testing.T, dir string, entries ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, manifestName), []byte(manifestHeader+strings.Join(entries, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// asAnotherUser hands p to uid 65534 (nobody), as if another local user
// had created it first. Only root can; the caller skips otherwise.
func asAnotherUser(t *testing.T, p string) {
	t.Helper()
	if err := os.Lchown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}

// memoCrash is the counterexample test-memo's crash column writes, so a
// plant at its path sits where the run writes.
const memoCrash = "counterexamples/test-memo--crash.sched"

// crashArgs makes the run write counterexamples (test-memo fails under
// crash and declares nothing: exit 1); cleanArgs writes only matrix.md.
var (
	crashArgs = []string{"-designs", "test-memo", "-families", "crash", "-n", "30"}
	cleanArgs = []string{"-designs", "test-keyed", "-families", "clean", "-n", "1"}
)

func TestMatrixRefusesEveryPlantedAttackAndChangesNothingOutside(t *testing.T) {
	cases := []struct {
		name string
		// plant prepares the run's directory out (an empty directory of
		// the user's when it is called) against v, and returns the -out to
		// give.
		plant func(t *testing.T, out string, v victim) string
		args  []string
		// code and want are the exit code and a part of the one stderr
		// line; want "" means the run may succeed (it must write only
		// inside its directory).
		code     int
		want     string
		rootOnly bool
	}{
		{name: "out-dir-is-a-symlink", args: cleanArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				if err := os.Remove(out); err != nil {
					t.Fatal(err)
				}
				symlink(t, v.dir, out)
				return out
			}},
		{name: "out-dir-is-a-symlink-named-with-a-trailing-slash", args: cleanArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				if err := os.Remove(out); err != nil {
					t.Fatal(err)
				}
				symlink(t, v.dir, out)
				return out + "/"
			}},
		{name: "counterexamples-is-a-symlink-and-the-run-writes-through-it", args: crashArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				symlink(t, v.dir, filepath.Join(out, "counterexamples"))
				return out
			}},
		{name: "counterexamples-is-a-symlink-and-the-manifest-lists-a-victim-to-remove", args: cleanArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				symlink(t, v.dir, filepath.Join(out, "counterexamples"))
				plantManifest(t, out, "matrix.md", "counterexamples/victim.md")
				return out
			}},
		{name: "matrix.md-is-a-symlink-the-manifest-lists", args: cleanArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				symlink(t, v.files[0], filepath.Join(out, "matrix.md"))
				plantManifest(t, out, "matrix.md")
				return out
			}},
		{name: "a-counterexample-is-a-symlink-the-manifest-lists", args: crashArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				mkdir(t, filepath.Join(out, "counterexamples"))
				symlink(t, v.files[0], filepath.Join(out, filepath.FromSlash(memoCrash)))
				plantManifest(t, out, "matrix.md", memoCrash)
				return out
			}},
		{name: "a-stale-counterexample-to-remove-is-a-symlink", args: cleanArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				mkdir(t, filepath.Join(out, "counterexamples"))
				symlink(t, v.files[1], filepath.Join(out, "counterexamples", "old.md"))
				plantManifest(t, out, "matrix.md", "counterexamples/old.md")
				return out
			}},
		{name: "the-manifest-is-a-symlink", args: cleanArgs, code: exitBadUse, want: "is a symbolic link",
			plant: func(t *testing.T, out string, v victim) string {
				symlink(t, v.files[0], filepath.Join(out, manifestName))
				return out
			}},
		{name: "manifest-entry-with-dot-dot", args: cleanArgs, code: exitBadUse, want: "outside",
			plant: func(t *testing.T, out string, v victim) string {
				rel, err := filepath.Rel(out, v.files[1])
				if err != nil {
					t.Fatal(err)
				}
				plantManifest(t, out, "matrix.md", filepath.ToSlash(rel))
				return out
			}},
		{name: "manifest-entry-absolute", args: cleanArgs, code: exitBadUse, want: "outside",
			plant: func(t *testing.T, out string, v victim) string {
				plantManifest(t, out, v.files[1])
				return out
			}},
		{name: "manifest-entry-counterexamples-dot-dot-dot-dot", args: cleanArgs, code: exitBadUse, want: "outside",
			plant: func(t *testing.T, _ string, v victim) string {
				// out is two levels below the victim's directory, so
				// counterexamples/../../victim.md is the victim's file.
				out := filepath.Join(v.dir, "a", "out")
				mkdir(t, out)
				plantManifest(t, out, "matrix.md", "counterexamples/../../victim.md")
				return out
			}},
		{name: "matrix.md-is-a-hard-link-to-a-victim", args: cleanArgs,
			plant: func(t *testing.T, out string, v victim) string {
				// A hard link cannot be told from the file it links, so it
				// is not refused; the run replaces the name instead of
				// writing through it.
				if err := os.Link(v.files[0], filepath.Join(out, "matrix.md")); err != nil {
					t.Skipf("cannot hard-link across the test's directories: %v", err)
				}
				plantManifest(t, out, "matrix.md")
				return out
			}},
		{name: "out-dir-owned-by-another-user", args: cleanArgs, code: exitBadUse, want: "not owned by", rootOnly: true,
			plant: func(t *testing.T, out string, v victim) string {
				asAnotherUser(t, out)
				return out
			}},
		{name: "counterexamples-owned-by-another-user", args: crashArgs, code: exitBadUse, want: "not owned by", rootOnly: true,
			plant: func(t *testing.T, out string, v victim) string {
				mkdir(t, filepath.Join(out, "counterexamples"))
				asAnotherUser(t, filepath.Join(out, "counterexamples"))
				return out
			}},
		{name: "the-manifest-owned-by-another-user", args: cleanArgs, code: exitBadUse, want: "not owned by", rootOnly: true,
			plant: func(t *testing.T, out string, v victim) string {
				plantManifest(t, out, "matrix.md")
				asAnotherUser(t, filepath.Join(out, manifestName))
				return out
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rootOnly && os.Getuid() != 0 {
				t.Skip("planting a directory owned by another user needs root (CI runs these tests as root)")
			}
			v := newVictim(t)
			out := filepath.Join(t.TempDir(), "out")
			mkdir(t, out)
			out = tc.plant(t, out, v)
			before := v.snapshot(t, out)
			args := append(append([]string{"matrix"}, tc.args...), "-out", out)
			code, _, errs := runCLI(args...)
			if after := v.snapshot(t, out); after != before {
				t.Errorf("onceproof %s changed a directory outside -out:\nbefore:\n%s\nafter:\n%s", strings.Join(args, " "), before, after)
			}
			if tc.want == "" {
				if code == exitBadUse {
					t.Errorf("onceproof %s: exit 2 (%q); want the run to write inside its directory", strings.Join(args, " "), errs)
				}
				return
			}
			if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("onceproof %s: exit %d, stderr %q; want exit %d and one line containing %q", strings.Join(args, " "), code, errs, tc.code, tc.want)
			}
		})
	}
}

// wroteDir is the directory of the "wrote DIR/matrix.md" line on stdout.
func wroteDir(t *testing.T, stdout string) string {
	t.Helper()
	for line := range strings.Lines(stdout) {
		if rest, ok := strings.CutPrefix(line, "wrote "); ok {
			md, _, _ := strings.Cut(rest, " (")
			return filepath.Dir(md)
		}
	}
	t.Fatalf("stdout names no directory written (no \"wrote ...\" line):\n%s", stdout)
	return ""
}

// Without -out a run writes to a fresh 0700 directory of its own under the
// temporary directory, never to the old shared $TMPDIR/onceproof/matrix an
// attacker can create first, and two runs never share one.
func TestDefaultOutIsAFreshPrivateDirectoryPerRun(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	v := newVictim(t)
	// The old default, pre-planted: a manifest-carrying directory whose
	// matrix.md and counterexamples/ point at the victim.
	shared := filepath.Join(tmp, "onceproof", "matrix")
	mkdir(t, shared)
	symlink(t, v.files[0], filepath.Join(shared, "matrix.md"))
	symlink(t, v.dir, filepath.Join(shared, "counterexamples"))
	plantManifest(t, shared, "matrix.md", "counterexamples/victim.md")
	before := v.snapshot(t, "")

	var dirs []string
	for range 2 {
		code, stdout, errs := runCLI(append([]string{"matrix"}, cleanArgs...)...)
		if code != exitOK {
			t.Fatalf("matrix without -out: exit %d, stderr %q", code, errs)
		}
		dir := wroteDir(t, stdout)
		dirs = append(dirs, dir)
		fi, err := os.Lstat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "onceproof-matrix-") || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("matrix without -out wrote to %s (%v); want a fresh directory %s/onceproof-matrix-* with mode 0700", dir, fi.Mode(), tmp)
		}
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two runs without -out shared the directory %s", dirs[0])
	}
	if after := v.snapshot(t, ""); after != before {
		t.Errorf("a run without -out followed the planted old default %s:\nbefore:\n%s\nafter:\n%s", shared, before, after)
	}
}

// A directory swapped for a symlink after the run opened it (the window
// between the checks and the writes) does not redirect the writes: they
// go to the directory opened, wherever it has moved.
func TestResultsGoToTheDirectoryOpenedEvenIfItsPathIsSwapped(t *testing.T) {
	base, v := t.TempDir(), newVictim(t)
	out := filepath.Join(base, "out")
	mkdir(t, out)
	o, err := openOut(out, "-out "+out)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	moved := filepath.Join(base, "moved")
	if err := os.Rename(out, moved); err != nil {
		t.Fatal(err)
	}
	symlink(t, v.dir, out)
	before := v.snapshot(t, "")
	if err := o.writeTo(map[string]string{"matrix.md": "the run's", "counterexamples/victim.md": "the run's"}); err != nil {
		t.Fatalf("writing in the opened directory: %v", err)
	}
	if after := v.snapshot(t, ""); after != before {
		t.Errorf("a write followed %s, swapped for a symlink after it was opened:\nbefore:\n%s\nafter:\n%s", out, before, after)
	}
	if b, err := os.ReadFile(filepath.Join(moved, "matrix.md")); err != nil || string(b) != "the run's" {
		t.Errorf("the opened directory (now %s) did not get matrix.md: %q, %v", moved, b, err)
	}
}
