package engine_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// toyN is the toy matrix's schedules per cell: 40, the budget the toy
// designs' declarations are derived for (panicky's (8/9)^40 < 1%).
const toyN = 40

// renderMatrix is the matrix as text: each cell's verdict, coverage and
// counterexamples (name, size, what it fails), then the mismatches.
func renderMatrix(m engine.Matrix[toySched, toyDetail]) string {
	var b strings.Builder
	fmt.Fprintf(&b, "toy matrix: %d schedules per cell from seed %d\n", m.N, m.Seed)
	for _, r := range m.Rows {
		fmt.Fprintf(&b, "\n%s: %s\n", r.Design, r.Declaration.Doc)
		for _, c := range r.Cells {
			fmt.Fprintf(&b, "  %-11s %-34s %d runs; reached %s\n", c.Family, c.Text(), c.Runs, c.Coverage.Format(toyWorld.Reached))
			for _, cx := range c.Counterexamples {
				fmt.Fprintf(&b, "    %s: %s (seed %d) fails %s\n", cx.Name, engine.Size(toyWorld, cx.Schedule), cx.Seed, engine.JoinProps(cx.Report.Failed()))
			}
		}
	}
	b.WriteString("\nmismatches:\n")
	for _, mm := range m.Mismatches() {
		fmt.Fprintf(&b, "  %s\n", mm)
	}
	return b.String()
}

func TestToyMatrixAgreesWithTheDeclarations(t *testing.T) {
	m := engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{Designs: toyDesigns, N: toyN, Parallel: 2})
	for _, mm := range m.Mismatches() {
		t.Errorf("%s (to reproduce: go test -run '^TestToyMatrixAgreesWithTheDeclarations$' ./engine)", mm)
	}
	for _, r := range m.Rows {
		if err := r.Declaration.Check(toyWorld.CheckFamily, toyWorld.Properties); err != nil {
			t.Errorf("%s's declaration: %v", r.Design, err)
		}
	}
	// Only journal keeps notes: every other cell's runs gave Tidy nothing
	// to judge, every journal run did.
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			want := c.Runs
			if r.Design == "journal" {
				want = 0
			}
			if got := c.NotJudgedBy[tidy]; got != want {
				t.Errorf("%s under %s: Tidy not judged in %d of %d runs, want %d (go test -run '^TestToyMatrixAgreesWithTheDeclarations$' ./engine)", r.Design, c.Family, got, c.Runs, want)
			}
		}
	}
	checkGolden(t, "matrix.golden", renderMatrix(m))
}

// The matrix is a pure function of its options: one worker or two, the
// same text. The rows and columns where goroutines meet (interleaved
// groups, pauses, recoveries) are where a shared scheduler state would
// show; the whole matrix is pinned by its golden.
func TestToyMatrixIsDeterministicWhateverParallel(t *testing.T) {
	run := func(parallel int) string {
		return renderMatrix(engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{
			Designs: []toyDesign{journal{}, racy{}, forgetful{}}, Families: []engine.Family{famPause, famConcurrent, famSmall}, N: toyN, Parallel: parallel}))
	}
	if a, b := run(1), run(2); a != b {
		t.Errorf("the matrix differs between Parallel 1 and 2:\n%s\n---\n%s\n(go test -run '^TestToyMatrixIsDeterministicWhateverParallel$' ./engine)", a, b)
	}
}

// A counterexample renders as the markdown the kit saves beside it: the
// shrunk failure of forgetful's long cell (one node, i0 i1 i2 i0).
func TestToyCounterexampleMarkdown(t *testing.T) {
	c := engine.RunCell(toyWorld, toyDesign(forgetful{}), famLong, engine.MatrixOptions[toyDesign]{N: toyN})
	if len(c.Counterexamples) != 1 {
		t.Fatalf("forgetful under long: %d counterexamples, want 1 (go test -run '^TestToyCounterexampleMarkdown$' ./engine)", len(c.Counterexamples))
	}
	cx := c.Counterexamples[0]
	checkGolden(t, cx.Name+".md", engine.Markdown(toyWorld, cx, "go test -run '^TestToyCounterexampleMarkdown$' ./engine", "TestToyCounterexampleMarkdown"))
}

// A cell that disagrees with its design's declaration is a mismatch, each
// way: a declared failure that does not show, an undeclared one that
// does, a run that could not be judged, a family not exercised.
func TestToyMismatchesSayWhatDisagrees(t *testing.T) {
	const repro = "go test -run '^TestToyMismatchesSayWhatDisagrees$' ./engine"
	m := engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{
		Designs: []toyDesign{overclaims{}, undeclared{unkeyed{}}, keyed{}}, Families: []engine.Family{famDup}, N: toyN})
	want := []string{
		"overclaims under dup: declared to fail NoDup, holds",
		"undeclared-unkeyed under dup: declared to hold, fails NoDup",
	}
	var got []string
	for _, mm := range m.Mismatches() {
		got = append(got, mm.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mismatches\n got %q\nwant %q (%s)", got, want, repro)
	}
	if r, ok := m.Row("keyed"); !ok || !r.Cells[0].Holds() || r.Cells[0].Mismatch() {
		t.Errorf("keyed's row: %+v, %v; want its one cell to hold and agree (%s)", r, ok, repro)
	}
	if _, ok := m.Row("nobody"); ok {
		t.Errorf("Row found a design the matrix does not have")
	}
	// Check is the matrix's row of one design.
	if row := engine.Check(toyWorld, toyDesign(overclaims{}), engine.MatrixOptions[toyDesign]{Families: []engine.Family{famDup}, N: toyN}); !reflect.DeepEqual(row, m.Rows[0]) {
		t.Errorf("Check's row differs from the matrix's (%s)", repro)
	}

	// Unknown and unexercised: a budget of 3 events reaches no copy.
	cut := engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{Designs: []toyDesign{keyed{}}, Families: []engine.Family{famDup}, N: 5, Run: engine.RunOptions{MaxEvents: 3}})
	c := cut.Rows[0].Cells[0]
	if c.Holds() || c.UnknownOf(noDup) != 5 || c.UnknownOf(responsive) != 5 || !strings.HasPrefix(c.Text(), "unknown: 5 of 5 runs") {
		t.Errorf("a cut-short cell: %s, unknown NoDup %d; want 5 of 5 unknown (%s)", c.Text(), c.UnknownOf(noDup), repro)
	}
	wantCut := "keyed under dup: declared to hold, is unknown (5 of 5 runs ran out of budget), and its runs never reached what the family exists for (no duplicate in 5 runs)"
	if mm := cut.Mismatches(); len(mm) != 1 || mm[0].String() != wantCut {
		t.Errorf("mismatches of a cut-short cell: %v\nwant %q (%s)", mm, wantCut, repro)
	}
	c.Unknown = 0
	if got := c.Text(); got != "not exercised: no duplicate in 5 runs" {
		t.Errorf("an unexercised cell's text: %q", got)
	}

	// Unknown alone is a mismatch: small's cut-short runs (4 events: past
	// both copies' arrivals) exercised their family and could not be
	// judged.
	small := engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{Designs: []toyDesign{keyed{}}, Families: []engine.Family{famSmall}, Run: engine.RunOptions{MaxEvents: 4}})
	if c := small.Rows[0].Cells[0]; len(c.Unexercised) > 0 || c.Unknown == 0 || !c.Mismatch() || len(small.Mismatches()) != 1 {
		t.Errorf("a cut-short small cell: %s, unexercised %v, mismatch %v; want unknown, exercised, and a mismatch (%s)", c.Text(), c.Unexercised, c.Mismatch(), repro)
	}
}
