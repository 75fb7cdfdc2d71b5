package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
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
// matrix.md, matrix.html or counterexamples/<name>.sched|.md|.html.
// Anything else inside the directory in a manifest (a hand edit) is
// ignored: it is never removed.
func ownedPath(p string) bool {
	if p == "matrix.md" || p == "matrix.html" {
		return true
	}
	dir, name := path.Split(p)
	return dir == "counterexamples/" && name != "" && !strings.ContainsAny(name, `/\`) && name[0] != '.' &&
		(strings.HasSuffix(name, ".sched") || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".html"))
}

// A results directory is written as if another local user may have
// prepared it: every file operation goes through an os.Root opened on the
// directory checked, so neither a symlink (checked or swapped in later) nor
// a manifest entry can send a write or a removal outside it; each file is
// written under a temporary name and renamed over its path, so a symlink
// or hard link planted at that path is replaced, never written through;
// and before anything is written the run refuses (bad input, naming the
// path) a symlink or another user's file or directory wherever it would
// write or remove, and a manifest entry that leaves the directory.

// outDir is a results directory opened for a run.
type outDir struct {
	path string // cleaned, for messages
	root *os.Root
	// perm is the directory's permission bits, without write for group
	// and others: counterexamples/ is created with them, so a fresh 0700
	// directory keeps its counterexamples as private as itself.
	perm fs.FileMode
}

// openOut checks dir, creating it (0755, as mkdir -p would) if it does
// not exist, and opens it: bad input, naming it as label ("-out DIR", or
// DIR where no flag chose it), if it is a symlink, not a directory, or not
// the current user's.
func openOut(dir, label string) (*outDir, error) {
	// Cleaned first: Lstat("link/") and Lstat("link/.") follow the link.
	// The writes always went to filepath.Join(dir, ...), a cleaned path.
	dir = filepath.Clean(dir)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, badf("matrix: cannot create %s: %v", label, err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, badf("matrix: %s: %v", label, err)
	}
	if err := mustBeMine(label, fi, true); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, badf("matrix: %s: %v", label, err)
	}
	// OpenRoot follows a symlink swapped in since the Lstat: the
	// directory opened must be the one checked.
	if rfi, err := root.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		root.Close()
		return nil, badf("matrix: %s changed while it was being opened: refusing to write in it", label)
	}
	return &outDir{path: dir, root: root, perm: fi.Mode().Perm() &^ 0o022}, nil
}

func (o *outDir) Close() error { return o.root.Close() }

// mustBeMine is nil if fi (named label) is the current user's directory
// (isDir) or regular file, and bad input naming what it is otherwise.
func mustBeMine(label string, fi fs.FileInfo, isDir bool) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return badf("matrix: %s is a symbolic link: refusing to write or remove through it (name its target instead)", label)
	case isDir && !fi.IsDir():
		return badf("matrix: %s is not a directory", label)
	case !isDir && !fi.Mode().IsRegular():
		return badf("matrix: %s is not a regular file: refusing to overwrite or remove it", label)
	}
	if uid, mine := ownedByMe(fi); !mine {
		return badf("matrix: %s is not owned by you (its owner is uid %d): refusing to write in another user's files", label, uid)
	}
	return nil
}

// lstat is Lstat of name (slash-separated, relative to o) checked by
// mustBeMine; nil, nil if it does not exist.
func (o *outDir) lstat(name string, isDir bool) (fs.FileInfo, error) {
	fi, err := o.root.Lstat(filepath.FromSlash(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	label := filepath.Join(o.path, filepath.FromSlash(name))
	if err != nil {
		return nil, badf("matrix: %s: %v", label, err)
	}
	return fi, mustBeMine(label, fi, isDir)
}

// readManifest returns the owned paths an earlier run listed in o (none
// if it has no manifest). An entry that leaves the directory (absolute, or
// with a .. that climbs out) is bad input: no run writes one, so the
// manifest was forged or hand-edited. Other entries that are not a path a
// run writes are ignored: they are never removed.
func (o *outDir) readManifest() (map[string]bool, error) {
	if fi, err := o.lstat(manifestName, false); fi == nil || err != nil {
		return map[string]bool{}, err
	}
	f, err := o.root.Open(manifestName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	owned := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if path.IsAbs(line) || filepath.IsAbs(line) || !filepath.IsLocal(filepath.FromSlash(line)) {
			return nil, badf("matrix: %s lists %q, a path outside %s: refusing to run (no onceproof run writes such an entry; delete the line or the manifest)",
				filepath.Join(o.path, manifestName), line, o.path)
		}
		if ownedPath(line) {
			owned[line] = true
		}
	}
	return owned, sc.Err()
}

// writeFile writes data to name (slash-separated, relative to o) under a
// temporary name beside it, then renames it over name: a symlink or hard
// link at name is replaced, not followed, and a reader never sees half a
// file.
func (o *outDir) writeFile(name string, data []byte) error {
	tmp, tmpName, err := o.tempFile(name)
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.root.Rename(filepath.FromSlash(tmpName), filepath.FromSlash(name))
	}
	if err != nil {
		o.root.Remove(filepath.FromSlash(tmpName))
	}
	return err
}

// tempFile creates a new file DIR/.BASE.tmp-N beside name (DIR/BASE) in
// o, exclusively (O_EXCL: never one that already exists, nor through a
// symlink), and returns it with its name.
func (o *outDir) tempFile(name string) (*os.File, string, error) {
	dir, base := path.Split(name)
	// 100 tries: a name is taken only by another run writing the same file
	// at that moment (a 1-in-2^32 draw each), or by a planted file.
	for range 100 {
		tmp := fmt.Sprintf("%s.%s.tmp-%d", dir, base, rand.Uint32())
		f, err := o.root.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			return f, tmp, err
		}
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s", filepath.Join(o.path, filepath.FromSlash(name)))
}

// writeResults writes files (paths relative to dir, slash-separated) and
// the manifest in dir, as writeTo does.
func writeResults(dir string, files map[string]string) error {
	o, err := openOut(dir, dir)
	if err != nil {
		return err
	}
	defer o.Close()
	return o.writeTo(files)
}

// writeTo writes files (paths relative to o, slash-separated) and the
// manifest, then removes what the previous manifest listed and this run
// did not write, so matrix.md and counterexamples/ always agree. It refuses
// (bad input) before writing anything if a file it would write exists and
// no earlier run's manifest lists it, or if a path it would write or
// remove is a symlink or not the user's.
func (o *outDir) writeTo(files map[string]string) error {
	owned, err := o.readManifest()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if !ownedPath(name) {
			return fmt.Errorf("writing results: %q is not a path a matrix run writes (a harness bug)", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	cx, err := o.lstat("counterexamples", true)
	if err != nil {
		return err
	}
	for _, name := range names {
		fi, err := o.lstat(name, false)
		if err != nil {
			return err
		}
		if fi != nil && !owned[name] {
			p := filepath.Join(o.path, filepath.FromSlash(name))
			return badf("matrix: refusing to overwrite %s: no earlier onceproof run wrote it (%s does not list it); give another -out", p, filepath.Join(o.path, manifestName))
		}
	}
	var stale []string
	for name := range owned {
		if _, keep := files[name]; !keep {
			if _, err := o.lstat(name, false); err != nil {
				return err
			}
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	if cx == nil {
		if err := o.root.Mkdir("counterexamples", o.perm); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	for _, name := range names {
		if err := o.writeFile(name, []byte(files[name])); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	// The manifest before the removals: if a removal fails, the next run
	// still knows every file it owns.
	if err := o.writeFile(manifestName, []byte(manifestText(files))); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	for _, name := range stale {
		if err := o.root.Remove(filepath.FromSlash(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
