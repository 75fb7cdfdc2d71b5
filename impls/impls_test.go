package impls_test

import (
	"slices"
	"testing"

	"github.com/onceproof/onceproof/engine"
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
	all := impls.All()
	if got := all.Names(); !slices.Equal(got, rows) {
		t.Fatalf("Names() = %v, want %v", got, rows)
	}
	for _, name := range rows {
		d, ok := all.ByName(name)
		if !ok || d.Name() != name {
			t.Errorf("ByName(%q) = %v, %v", name, d, ok)
		}
	}
	if _, ok := all.ByName("no-such-design"); ok {
		t.Error("ByName found a design that does not exist")
	}
}

// TestEveryDesignDocumentsAndDeclares: each row declares itself, with a
// paragraph for readers and a derivation for every declared failure over
// known families and properties, each family once; ref, sharded and
// ristretto declare that they hold.
func TestEveryDesignDocumentsAndDeclares(t *testing.T) {
	mustHold := map[string]bool{"ref": true, "sharded": true, "ristretto": true}
	for _, d := range impls.All() {
		if _, ok := d.(faults.Declarer); !ok {
			t.Errorf("%s: does not declare itself (faults.Declarer)", d.Name())
			continue
		}
		decl := engine.DeclarationOf(d)
		if len(decl.Doc) < 80 {
			t.Errorf("%s: no Doc paragraph for results/matrix.md", d.Name())
		}
		if err := decl.Check(faults.World.CheckFamily, faults.World.Properties); err != nil {
			t.Errorf("%s: %v", d.Name(), err)
		}
		for _, e := range decl.Fails {
			if len(e.Why) < 40 {
				t.Errorf("%s: the failure under %v is not derived (Why %q)", d.Name(), e.Families, e.Why)
			}
			if mustHold[d.Name()] {
				t.Errorf("%s must hold everywhere, declares %v under %v", d.Name(), e.Props, e.Families)
			}
		}
	}
}
