package impls_test

import (
	"slices"
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
)

// rows is the matrix's row order (issue 3 then issue 4).
var rows = []string{
	"ref", "seed-verbatim", "window-only", "seq-strict", "seq-lenient", "type-flags", "sharded", "ristretto",
	"four-sig", "four-sig-cap3", "four-sig-clear-on-full", "four-sig-no-room", "four-sig-no-net",
	"four-sig-no-final", "credit-current-room",
}

func TestAllListsEveryRowInOrder(t *testing.T) {
	if got := impls.Names(); !slices.Equal(got, rows) {
		t.Fatalf("Names() = %v, want %v", got, rows)
	}
	for _, name := range rows {
		d, ok := impls.ByName(name)
		if !ok || d.Name() != name {
			t.Errorf("ByName(%q) = %v, %v", name, d, ok)
		}
	}
	if _, ok := impls.ByName("no-such-design"); ok {
		t.Error("ByName found a design that does not exist")
	}
}

// TestEveryDesignDocumentsAndDeclares: each row has a matrix paragraph and
// declares its verdicts over known families and properties only, each
// property once; ref, sharded and ristretto declare that they hold.
func TestEveryDesignDocumentsAndDeclares(t *testing.T) {
	mustHold := map[string]bool{"ref": true, "sharded": true, "ristretto": true}
	for _, d := range impls.All() {
		doc, ok := d.(impls.Documented)
		if !ok || len(doc.Doc()) < 80 {
			t.Errorf("%s: no Doc paragraph for results/matrix.md", d.Name())
		}
		e, ok := d.(faults.Expecter)
		if !ok {
			t.Errorf("%s: does not declare its verdicts (faults.Expecter)", d.Name())
			continue
		}
		for f, ps := range e.Expected() {
			if err := f.Check(); err != nil || !slices.Contains(faults.Families, f) {
				t.Errorf("%s: declares unknown family %q", d.Name(), f)
			}
			for i, p := range ps {
				if !slices.Contains(faults.Properties, p) || slices.Contains(ps[i+1:], p) {
					t.Errorf("%s under %s: property %q unknown or repeated in %v", d.Name(), f, p, ps)
				}
			}
			if mustHold[d.Name()] && len(ps) > 0 {
				t.Errorf("%s must hold everywhere, declares %v under %s", d.Name(), ps, f)
			}
		}
	}
}
