package impls_test

import (
	"slices"
	"testing"

	"github.com/onceproof/onceproof/impls"
)

// row is the least a design is to a Registry: its row name.
type row string

func (r row) Name() string { return string(r) }

// TestRegistryLooksUpRowsByNameInOrder pins the contract both subjects'
// registries share: Names keeps row order, ByName finds each row and
// answers false with the zero design for a name it does not hold.
func TestRegistryLooksUpRowsByNameInOrder(t *testing.T) {
	const repro = "go test ./impls/ -run TestRegistryLooksUpRowsByNameInOrder -v"
	r := impls.Registry[row]{"b", "a", "c"}
	if got, want := r.Names(), []string{"b", "a", "c"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v (to reproduce: %s)", got, want, repro)
	}
	for _, name := range r.Names() {
		if d, ok := r.ByName(name); !ok || d.Name() != name {
			t.Errorf("ByName(%q) = %q, %v (to reproduce: %s)", name, d, ok, repro)
		}
	}
	if d, ok := r.ByName("d"); ok || d != "" {
		t.Errorf("ByName(%q) = %q, %v; want the zero design and false (to reproduce: %s)", "d", d, ok, repro)
	}
	if got := (impls.Registry[row]{}).Names(); got == nil || len(got) != 0 {
		t.Errorf("an empty registry's Names() = %#v, want an empty, non-nil slice (to reproduce: %s)", got, repro)
	}
}
