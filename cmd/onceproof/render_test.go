package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

// tinyMatrix is a matrix of the test designs quick enough for every
// run: a declared failure, an undeclared one (test-memo under crash) and
// rows that hold.
func tinyMatrix() engine.Matrix[faults.Schedule, faults.Detail] {
	return engine.RunMatrix(props.World, engine.MatrixOptions[faults.Design]{
		Designs: testDesigns, Families: []engine.Family{faults.Families.Clean, faults.Families.Crash, "late+crash"}, N: 30})
}

// checkLines fails on a line of a generated .md over maxLine characters.
func checkLines(t *testing.T, name, text string) {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > maxLine {
			t.Errorf("%s:%d is %d characters, over %d: %.120s... (go test ./cmd/onceproof -run '^TestGeneratedMarkdownLinesAreShort$')", name, i+1, n, maxLine, line)
		}
	}
}

// No line of a generated .md (matrix.md, a counterexample's page) is over
// maxLine characters: the committed results' (TestCommittedResultsAreCurrent
// keeps them the code's) and a fresh matrix's, with an unexpected cell.
func TestGeneratedMarkdownLinesAreShort(t *testing.T) {
	for name, text := range files(settleSubject(testDesigns), tinyMatrix(), "out", "onceproof matrix") {
		if strings.HasSuffix(name, ".md") {
			checkLines(t, name, text)
		}
	}
	n := 0
	err := filepath.WalkDir(filepath.Join(moduleRoot, "results"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		n++
		checkLines(t, p, string(b))
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("reading results/: %v (%d .md files)", err, n)
	}
}

// TestMatrixMarkdownKeepsEveryVerdict reads matrix.md back: each cell's
// glyph and counterexample link from the table, and from its design's
// section the verdict, every counterexample with the properties it shows,
// and what was declared where the cell disagrees. It checks them against
// the engine's matrix, for a small one here and for the committed
// matrices in TestCommittedMatricesKeepEveryVerdict.
func TestMatrixMarkdownKeepsEveryVerdict(t *testing.T) {
	m := tinyMatrix()
	if len(m.Mismatches()) == 0 {
		t.Fatal("the small matrix has no unexpected cell to read back")
	}
	checkRecoverable(t, settleSubject(testDesigns), m, "")
}

// The committed matrices keep every cell's verdict (as
// TestMatrixMarkdownKeepsEveryVerdict): read back from results/ and
// compared with the matrix `make proofs` computes.
func TestCommittedMatricesKeepEveryVerdict(t *testing.T) {
	reg := registry()
	t.Run("subject=settle", func(t *testing.T) { checkCommittedRecoverable(t, settleSubject(reg.settle)) })
	t.Run("subject=loot", func(t *testing.T) { checkCommittedRecoverable(t, lootSubject(reg.loot)) })
}

func checkCommittedRecoverable[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X]) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, filepath.FromSlash(sub.results), "matrix.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkRecoverable(t, sub, defaultMatrix(t, sub), string(b))
}

var (
	refDef     = regexp.MustCompile(`^\[(\d+)\]: (\S+)$`)
	linkedCell = regexp.MustCompile(`^\[([^\]]+)\]\[(\d+)\]$`)
	designCell = regexp.MustCompile(`^\[([^\]]+)\]\[\]$`)
)

// checkRecoverable reads md (matrixMarkdown of m when empty) back and
// compares every cell with m's.
func checkRecoverable[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X], m engine.Matrix[S, X], md string) {
	t.Helper()
	if md == "" {
		md = matrixMarkdown(sub, m, "onceproof matrix")
	}
	const repro = "(go test ./cmd/onceproof -run 'KeepEveryVerdict$')"
	refs := map[string]string{}
	type pos struct{ design, family string }
	table := map[pos]string{}
	var header []string
	sections := map[string][]string{} // design -> its list items, unwrapped
	section := ""
	for _, line := range strings.Split(md, "\n") {
		if r := refDef.FindStringSubmatch(line); r != nil {
			refs[r[1]] = r[2]
		}
		switch {
		case strings.HasPrefix(line, "### "):
			section = strings.TrimPrefix(line, "### ")
		case section == "" && strings.HasPrefix(line, "|"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			switch {
			case cells[0] == "design":
				header = cells
			case strings.Trim(cells[0], "-") == "":
			default:
				d := designCell.FindStringSubmatch(cells[0])
				if d == nil || len(cells) != len(header) {
					t.Fatalf("a table row that names no design or has %d cells for %d columns: %s %s", len(cells), len(header), line, repro)
				}
				for k, c := range cells[1:] {
					table[pos{d[1], header[k+1]}] = c
				}
			}
		case section != "" && strings.HasPrefix(line, "- "):
			sections[section] = append(sections[section], line[2:])
		case section != "" && strings.HasPrefix(line, "  ") && len(sections[section]) > 0:
			items := sections[section]
			items[len(items)-1] += " " + strings.TrimSpace(line)
		}
	}
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			where := fmt.Sprintf("%s under %s", r.Design, c.Family)
			got, ok := table[pos{r.Design, string(c.Family)}]
			if !ok {
				t.Errorf("%s: no cell in matrix.md's table %s", where, repro)
				continue
			}
			glyph, target := got, ""
			if l := linkedCell.FindStringSubmatch(got); l != nil {
				glyph, target = l[1], refs[l[2]]
			}
			k := kindOf(c)
			if glyph != k.Glyph {
				t.Errorf("%s: the table shows %q, want %s (%s) %s", where, got, k.Glyph, k.Meaning, repro)
			}
			want := ""
			if len(c.Counterexamples) > 0 {
				want = "counterexamples/" + c.Counterexamples[0].Name + ".md"
			}
			if target != want {
				t.Errorf("%s: the table's cell %q links %q, want %q %s", where, got, target, want, repro)
			}
			var item string
			for _, it := range sections[r.Design] {
				if strings.HasPrefix(it, string(c.Family)+": ") {
					item = it
				}
			}
			if k == kindHolds {
				if item != "" {
					t.Errorf("%s holds, yet its design's section lists it: %q %s", where, item, repro)
				}
				if c.Scope != "" && !anyHasPrefix(sections[r.Design], fmt.Sprintf("%s (all %d runs of its scope): ", c.Family, c.Runs)) {
					t.Errorf("%s: its section does not say its %d runs were all of its scope %s", where, c.Runs, repro)
				}
				continue
			}
			wants := []string{string(c.Family) + ": " + c.Text()}
			for _, cx := range c.Counterexamples {
				wants = append(wants, fmt.Sprintf("[%s](counterexamples/%s.md)", joinProps(cx.Report.Failed()), cx.Name))
			}
			if c.Mismatch() {
				declared := "holds"
				if len(c.Expected) > 0 {
					declared = "fails: " + joinProps(c.Expected)
				}
				wants = append(wants, "*unexpected: declared "+declared+"*")
			}
			for _, w := range wants {
				if !strings.Contains(item, w) {
					t.Errorf("%s: its line under the design %q lacks %q %s", where, item, w, repro)
				}
			}
		}
	}
}

// anyHasPrefix reports whether an item of items starts with prefix.
func anyHasPrefix(items []string, prefix string) bool {
	for _, it := range items {
		if strings.HasPrefix(it, prefix) {
			return true
		}
	}
	return false
}
