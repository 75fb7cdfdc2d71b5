package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// toyN is the toy matrix's schedules per cell: 40, the budget the toy
// designs' declarations are derived for (panicky's (8/9)^40 < 1%).
const toyN = 40

func toyMatrix(parallel int) engine.Matrix[toySched, toyDetail] {
	return engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{Designs: toyDesigns, N: toyN, Parallel: parallel})
}

// renderMatrix is the matrix as text: each cell's verdict, coverage and
// counterexamples (name, size, what it fails), then the mismatches.
func renderMatrix(m engine.Matrix[toySched, toyDetail]) string {
	var b strings.Builder
	fmt.Fprintf(&b, "toy matrix: %d schedules per cell from seed %d\n", m.N, m.Seed)
	for _, r := range m.Rows {
		fmt.Fprintf(&b, "\n%s: %s\n", r.Design, r.Declaration.Doc)
		for _, c := range r.Cells {
			fmt.Fprintf(&b, "  %-11s %-34s %d runs; reached %s\n", c.Family, c.Text(), c.Runs, c.Coverage.Format(toyWorld.Reached()))
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
	m := toyMatrix(2)
	for _, mm := range m.Mismatches() {
		t.Errorf("%s (to reproduce: go test -run '^TestToyMatrixAgreesWithTheDeclarations$' ./engine)", mm)
	}
	for _, r := range m.Rows {
		if err := r.Declaration.Check(toyWorld.CheckFamily, toyWorld.Properties()); err != nil {
			t.Errorf("%s's declaration: %v", r.Design, err)
		}
	}
	checkGolden(t, "matrix.golden", renderMatrix(m))
}

// The matrix is a pure function of its options: one worker or two, the
// same text.
func TestToyMatrixIsDeterministicWhateverParallel(t *testing.T) {
	if a, b := renderMatrix(toyMatrix(1)), renderMatrix(toyMatrix(2)); a != b {
		t.Errorf("the matrix differs between Parallel 1 and 2:\n%s\n---\n%s\n(go test -run '^TestToyMatrixIsDeterministicWhateverParallel$' ./engine)", a, b)
	}
}
