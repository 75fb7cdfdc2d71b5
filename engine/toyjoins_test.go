package engine_test

import (
	"slices"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// TestAWorldsJoinsAreColumnsByDefault: a world's documented Joins run
// after its Families wherever no family list is given (Columns: the
// matrix's default columns, TestDesign's default cells), and a join cell
// expects what its parts are declared to fail. The toy world documents
// none (its golden files have no join column), so a copy of it does.
func TestAWorldsJoinsAreColumnsByDefault(t *testing.T) {
	const repro = "(go test ./engine -run '^TestAWorldsJoinsAreColumnsByDefault$')"
	join := engine.Join(famDup, famCrash)
	w := toyWorld
	w.Joins = []engine.Family{join}
	want := append(slices.Clone(toyFamilies), join)
	if got := w.Columns(); !slices.Equal(got, want) {
		t.Fatalf("Columns() = %v, want the families then the joins %v %s", got, want, repro)
	}
	if got := toyWorld.Complete().Columns(); !slices.Equal(got, toyFamilies) {
		t.Errorf("a world with no Joins: Columns() = %v, want its families %v %s", got, toyFamilies, repro)
	}
	for _, d := range toyDesigns {
		m := engine.RunMatrix(w, engine.MatrixOptions[toyDesign]{Designs: []toyDesign{d}, N: toyN, Parallel: 2})
		if !slices.Equal(m.Families, want) {
			t.Fatalf("RunMatrix with no Families ran %v, want %v %s", m.Families, want, repro)
		}
		c := m.Rows[0].Cells[len(want)-1]
		decl := engine.DeclarationOf(d)
		if exp := decl.Expected(join, w.Properties); !slices.Equal(c.Expected, exp) {
			t.Errorf("%s under %s: expected %v, want the parts' %v %s", d.Name(), join, c.Expected, exp, repro)
		}
	}
}
