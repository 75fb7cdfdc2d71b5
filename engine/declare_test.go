package engine

import (
	"slices"
	"strings"
	"testing"
)

// A world of three families and three properties, enough for a join to
// take its verdict from one part, from two, or from its own Expect.
var (
	declOrder = []Property{"P1", "P2", "P3"}
	declKnown = []Family{"late", "crash", "dup"}
)

func declCheckFamily(f Family) error { return CheckParts(f, declKnown, "family") }

func TestJoinedFamilyFailsWhatItsPartsAreDeclaredToFail(t *testing.T) {
	d := Declaration{Fails: []Expect{
		{Families: []Family{"late"}, Props: []Property{"P2"}, Why: "late fails P2"},
		{Families: []Family{"dup"}, Props: []Property{"P3", "P1"}, Why: "dup fails P1 and P3"},
	}}
	for _, c := range []struct {
		f    Family
		want []Property
	}{
		{"late", []Property{"P2"}},
		{"crash", nil},                                   // plain, named by no Expect: holds
		{"late+crash", []Property{"P2"}},                 // from late; crash adds nothing
		{"crash+late", []Property{"P2"}},                 // the same join in another order
		{"crash+dup", []Property{"P1", "P3"}},            // from dup, in the world's order
		{"late+dup", []Property{"P1", "P2", "P3"}},       // the union, each once
		{"late+crash+dup", []Property{"P1", "P2", "P3"}}, // three parts
		{"late+late", []Property{"P2"}},                  // a repeated part counts once
	} {
		if err := d.Check(declCheckFamily, declOrder); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if got := d.Expected(c.f, declOrder); !slices.Equal(got, c.want) {
			t.Errorf("Expected(%s) = %v, want %v (declaration %+v)", c.f, got, c.want, d.Fails)
		}
	}
}

func TestAnExplicitJoinOverridesWhatItsPartsDerive(t *testing.T) {
	d := Declaration{Fails: []Expect{
		{Families: []Family{"late"}, Props: []Property{"P2"}, Why: "late fails P2"},
		{Families: []Family{"crash"}, Props: []Property{"P3"}, Why: "crash fails P3"},
		{Families: []Family{"late+crash"}, Props: []Property{"P1"}, Why: "together they fail P1 only"},
		{Families: []Family{"dup+late"}, Why: "a copy repairs what late breaks"}, // no Props: holds
	}}
	if err := d.Check(declCheckFamily, declOrder); err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, c := range []struct {
		f    Family
		want []Property
	}{
		{"late+crash", []Property{"P1"}},
		{"crash+late", []Property{"P1"}}, // declared in the other order: the same family
		{"late+dup", nil},
		{"crash+dup", []Property{"P3"}},            // not declared: derived
		{"late+crash+dup", []Property{"P2", "P3"}}, // derived from plain parts only
		{"late", []Property{"P2"}},                 // a part keeps its own verdict
	} {
		if got := d.Expected(c.f, declOrder); !slices.Equal(got, c.want) {
			t.Errorf("Expected(%s) = %v, want %v (declaration %+v)", c.f, got, c.want, d.Fails)
		}
	}
}

func TestCheckRefusesAmbiguousOrEmptyDeclarations(t *testing.T) {
	for _, c := range []struct {
		name string
		d    Declaration
		want string
	}{
		{"no Props on a plain family", Declaration{Fails: []Expect{
			{Families: []Family{"late"}, Why: "holds"},
		}}, "late is not a join"},
		{"one join in two orders", Declaration{Fails: []Expect{
			{Families: []Family{"late+crash"}, Props: []Property{"P1"}, Why: "a"},
			{Families: []Family{"crash+late"}, Props: []Property{"P2"}, Why: "b"},
		}}, "Fails[0] and Fails[1] both declare crash+late"},
		{"no derivation", Declaration{Fails: []Expect{
			{Families: []Family{"late+crash"}},
		}}, "needs families and its derivation"},
		{"unknown part", Declaration{Fails: []Expect{
			{Families: []Family{"late+nope"}, Props: []Property{"P1"}, Why: "a"},
		}}, `unknown family "nope"`},
	} {
		err := c.d.Check(declCheckFamily, declOrder)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check(%+v) = %v, want an error containing %q", c.name, c.d.Fails, err, c.want)
		}
	}
}

// Check refuses two Expects naming one family, but a world that does not
// run Check may have them, each deriving some of the properties (the loot
// row lock-only under concurrent-settle, in the committed
// results/loot/matrix.md): the family, and a join of it, fail all of them.
func TestSeveralExpectsOfOneFamilyAddUp(t *testing.T) {
	d := Declaration{Fails: []Expect{
		{Families: []Family{"late", "crash"}, Props: []Property{"P1"}, Why: "late and crash fail P1"},
		{Families: []Family{"late"}, Props: []Property{"P3"}, Why: "late, rarely, fails P3 too"},
	}}
	for f, want := range map[Family][]Property{
		"late":       {"P1", "P3"},
		"crash":      {"P1"},
		"dup+late":   {"P1", "P3"},
		"crash+late": {"P1", "P3"},
	} {
		if got := d.Expected(f, declOrder); !slices.Equal(got, want) {
			t.Errorf("Expected(%s) = %v, want %v (declaration %+v)", f, got, want, d.Fails)
		}
	}
}
