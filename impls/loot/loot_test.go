package loot_test

import (
	"slices"
	"testing"

	"github.com/onceproof/onceproof/engine"
	lootimpls "github.com/onceproof/onceproof/impls/loot"
)

// rows is the loot matrix's row order: the reference, source 004 verbatim,
// then the shortcuts (results/loot/matrix.md's order).
var rows = []string{
	"loot-ref", "loot-seed-verbatim", "select-then-update", "lock-only", "uuid-grant-key", "nonatomic-unlock",
	"no-tiebreak", "no-membership", "no-deadline-in-cas", "closed-before-grants", "compensation-new-key",
	"app-clock-deadline", "check-then-claim",
}

const repro = "go test ./impls/loot/ -run 'TestAllListsEveryLootRowInOrder|TestEveryLootDesignDocumentsAndDeclares' -v"

func TestAllListsEveryLootRowInOrder(t *testing.T) {
	all := lootimpls.All()
	if got := all.Names(); !slices.Equal(got, rows) {
		t.Fatalf("Names() = %v, want %v (to reproduce: %s)", got, rows, repro)
	}
	for _, name := range rows {
		if d, ok := all.ByName(name); !ok || d.Name() != name {
			t.Errorf("ByName(%q) = %v, %v (to reproduce: %s)", name, d, ok, repro)
		}
	}
}

// TestEveryLootDesignDocumentsAndDeclares: each row declares itself with a
// paragraph for results/loot/matrix.md, and every declared failure is
// derived; loot-ref declares that it holds.
func TestEveryLootDesignDocumentsAndDeclares(t *testing.T) {
	for _, d := range lootimpls.All() {
		if _, ok := d.(engine.Declarer); !ok {
			t.Errorf("%s: does not declare itself (engine.Declarer) (to reproduce: %s)", d.Name(), repro)
			continue
		}
		decl := engine.DeclarationOf(d)
		if len(decl.Doc) < 80 {
			t.Errorf("%s: no Doc paragraph for results/loot/matrix.md (to reproduce: %s)", d.Name(), repro)
		}
		for _, e := range decl.Fails {
			if len(e.Families) == 0 || len(e.Props) == 0 || len(e.Why) < 40 {
				t.Errorf("%s: the failure %v under %v is not derived (Why %q) (to reproduce: %s)", d.Name(), e.Props, e.Families, e.Why, repro)
			}
			if d.Name() == "loot-ref" {
				t.Errorf("loot-ref must hold everywhere, declares %v under %v (to reproduce: %s)", e.Props, e.Families, repro)
			}
		}
	}
}
