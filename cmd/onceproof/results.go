package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// manifestName is the file in a results directory that lists, one path per
// line, the files the last matrix run wrote there. A run overwrites only
// files the manifest lists (or that do not exist) and removes only files it
// lists that the run no longer produces, so a directory shared with the
// user's own files loses nothing.
const manifestName = ".onceproof-files"

const manifestHeader = "# written by onceproof matrix: the files it owns in this directory (it removes or overwrites no others)\n"

// manifestText is the manifest of files.
func manifestText(files map[string]string) string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	return manifestHeader + strings.Join(names, "\n") + "\n"
}

// ownedPath reports whether a manifest entry is a path a matrix run writes:
// matrix.md or counterexamples/<name>.sched|.md. Anything else in a manifest
// (a hand edit, "../x") is ignored: it is never removed.
func ownedPath(p string) bool {
	if p == "matrix.md" {
		return true
	}
	dir, name := path.Split(p)
	return dir == "counterexamples/" && name != "" && !strings.ContainsAny(name, `/\`) && name[0] != '.' &&
		(strings.HasSuffix(name, ".sched") || strings.HasSuffix(name, ".md"))
}

// readManifest returns the owned paths an earlier run listed in dir (none
// if it has no manifest).
func readManifest(dir string) (map[string]bool, error) {
	f, err := os.Open(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	owned := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); ownedPath(line) {
			owned[line] = true
		}
	}
	return owned, sc.Err()
}

// prepareOut checks that dir can take a matrix run's files and creates it:
// bad input (exit 2) if it is a file or cannot be created.
func prepareOut(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return badf("matrix: -out %s is not a directory", dir)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return badf("matrix: -out %s: %v", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badf("matrix: cannot create -out %s: %v", dir, err)
	}
	return nil
}

// writeResults writes files (paths relative to dir, slash-separated) and
// the manifest, then removes what the previous manifest listed and this
// run did not write, so matrix.md and counterexamples/ always agree. It
// refuses (bad input) before writing anything if a file it would write
// exists and no earlier run's manifest lists it.
func writeResults(dir string, files map[string]string) error {
	if err := prepareOut(dir); err != nil {
		return err
	}
	owned, err := readManifest(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(dir, manifestName), err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if !ownedPath(name) {
			return fmt.Errorf("writing results: %q is not a path a matrix run writes (a harness bug)", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Lstat(p); err == nil && !owned[name] {
			return badf("matrix: refusing to overwrite %s: no earlier onceproof run wrote it (%s does not list it); give another -out", p, filepath.Join(dir, manifestName))
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "counterexamples"), 0o755); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	// The manifest before the removals: if a removal fails, the next run
	// still knows every file it owns.
	if err := os.WriteFile(filepath.Join(dir, manifestName), []byte(manifestText(files)), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	for name := range owned {
		if _, keep := files[name]; keep {
			continue
		}
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing a stale result: %w", err)
		}
	}
	return nil
}

// atModuleRoot reports whether the working directory is the root of this
// module (where `make proofs` runs): only there does a default run write
// the committed results/.
func atModuleRoot() bool {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(first) == "module github.com/onceproof/onceproof"
}
