package engine_test

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// Progress is called after every run and every cell, never going back;
// at the end every cell is done, the generated runs reach the total
// counted ahead, and the exhaustive cells' runs are their cells' Runs.
func TestToyMatrixProgressCountsEveryRun(t *testing.T) {
	const rerun = "go test -run '^TestToyMatrixProgressCountsEveryRun$' ./engine"
	var calls []engine.MatrixProgress
	opt := engine.MatrixOptions[toyDesign]{Designs: toyDesigns, N: toyN, Parallel: 2,
		Progress: func(p engine.MatrixProgress) { calls = append(calls, p) }}
	m := engine.RunMatrix(toyWorld, opt)
	var generated, exhaustive, exhaustiveCells int
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if _, _, ok := toyWorld.Exhaustive(c.Family); ok {
				exhaustive += c.Runs
				exhaustiveCells++
			} else {
				generated += c.Runs
			}
		}
	}
	if len(calls) == 0 {
		t.Fatalf("Progress was never called (%s)", rerun)
	}
	for i := 1; i < len(calls); i++ {
		a, b := calls[i-1], calls[i]
		if b.CellsDone < a.CellsDone || b.RunsDone < a.RunsDone || b.ExhaustiveRuns < a.ExhaustiveRuns {
			t.Fatalf("progress went back: %+v then %+v (%s)", a, b, rerun)
		}
	}
	last := calls[len(calls)-1]
	cells := len(toyDesigns) * len(m.Families)
	if last.Cells != cells || last.CellsDone != cells || last.RunsDone != generated || last.Runs != generated ||
		last.ExhaustiveRuns != exhaustive || last.Exhaustive != exhaustiveCells || last.Last == "" {
		t.Errorf("last progress %+v; want %d cells done, %d generated runs of %d, %d runs in %d exhaustive cells (%s)",
			last, cells, generated, generated, exhaustive, exhaustiveCells, rerun)
	}
	if want := generated + exhaustive + cells; len(calls) != want {
		t.Errorf("Progress called %d times, want once a run and once a cell: %d (%s)", len(calls), want, rerun)
	}
}
