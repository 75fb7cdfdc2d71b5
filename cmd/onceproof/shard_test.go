package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A matrix run in 3 shards and merged writes what the same command run
// whole writes, byte for byte (every file, the report and the exit code),
// for both subjects and shards given in any order.
func TestMergedShardsAreTheWholeMatrix(t *testing.T) {
	for _, c := range []struct {
		subject string
		args    []string
	}{
		{"settle", []string{"-designs", "test-memo,test-keyed", "-families", "crash,duplicate,late", "-n", "20"}},
		{"loot", []string{"-subject", "loot", "-designs", "loot-ref,lock-only", "-families", "lock-expiry,duplicate-claim", "-n", "20", "-seed", "2"}},
	} {
		t.Run("subject="+c.subject, func(t *testing.T) {
			rerun := "go test ./cmd/onceproof -run 'TestMergedShardsAreTheWholeMatrix/subject=" + c.subject + "'"
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			wholeCode, wholeOut, errs := runCLI(append([]string{"matrix", "-out", out}, c.args...)...)
			if wholeCode == exitBadUse {
				t.Fatalf("matrix: %s (%s)", errs, rerun)
			}
			whole := readTree(t, out)
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, i := range []string{"2", "0", "1"} {
				f := filepath.Join(dir, "shard"+i+".json")
				code, so, errs := runCLI(append([]string{"matrix", "-shard", i + "/3", "-json", f}, c.args...)...)
				if code != exitOK || !strings.Contains(so, "shard "+i+"/3:") {
					t.Fatalf("shard %s/3: exit %d\n%s%s (%s)", i, code, so, errs, rerun)
				}
				files = append(files, f)
			}
			code, mergeOut, errs := runCLI(append([]string{"merge", "-out", out}, files...)...)
			if code != wholeCode || mergeOut != wholeOut {
				t.Errorf("merge: exit %d, whole %d; report\n%s\nwhole\n%s%s (%s)", code, wholeCode, mergeOut, wholeOut, errs, rerun)
			}
			merged := readTree(t, out)
			for name, body := range whole {
				if merged[name] != body {
					t.Errorf("%s differs between the merged shards and the whole matrix (%s)", name, rerun)
				}
			}
			if len(merged) != len(whole) {
				t.Errorf("the merge wrote %d files, the whole matrix %d (%s)", len(merged), len(whole), rerun)
			}
		})
	}
}

// A merge of what is not one whole set of one command's shards, and a
// -shard run that could not be merged, are bad input (exit 2) saying why.
func TestMergeRefusesWhatIsNotOneCampaign(t *testing.T) {
	dir := t.TempDir()
	shard := func(name, sh string, extra ...string) string {
		f := filepath.Join(dir, name)
		args := append([]string{"matrix", "-designs", "test-memo", "-families", "crash,late", "-n", "5", "-shard", sh, "-json", f}, extra...)
		if code, so, errs := runCLI(args...); code != exitOK {
			t.Fatalf("%v: exit %d %s%s", args, code, so, errs)
		}
		return f
	}
	a, b, other := shard("a.json", "0/2"), shard("b.json", "1/2"), shard("c.json", "1/2", "-seed", "9")
	notShard := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notShard, []byte(`{"N":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "-out", filepath.Join(dir, "o"), a}, "run by no shard"},
		{[]string{"merge", "-out", filepath.Join(dir, "o"), a, a}, "given twice"},
		{[]string{"merge", "-out", filepath.Join(dir, "o"), a, other}, "shards of two matrix commands"},
		{[]string{"merge", "-out", filepath.Join(dir, "o"), a, notShard}, "is not a shard file"},
		{[]string{"merge"}, "no shard files"},
		{[]string{"matrix", "-shard", "0/2"}, "-json FILE"},
		{[]string{"matrix", "-shard", "2/2", "-json", filepath.Join(dir, "y.json")}, "want i/n"},
		{[]string{"matrix", "-shard", "0/2", "-json", filepath.Join(dir, "y.json"), "-out", dir}, "give -out to onceproof merge"},
	} {
		code, so, errs := runCLI(c.args...)
		if code != exitBadUse || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and a line saying %q (stdout %q)", c.args, code, errs, c.want, so)
		}
	}
	if code, so, errs := runCLI("merge", "-out", filepath.Join(dir, "ok"), b, a); code == exitBadUse {
		t.Errorf("merge of both shards: exit %d %s%s", code, so, errs)
	}
}

// readTree is every file under dir, by its path below dir.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
