package engine

import (
	"fmt"
	"slices"
)

// Declaration is what a design says about itself, once: what it is, and
// the verdict it expects in each family with the derivation of that
// verdict. The matrix and the kit judge it against what the runs show, and
// render it for readers; a design's package doc need not repeat it.
type Declaration struct {
	// Doc says what the design is, where it comes from, and why it holds
	// where it holds: one paragraph.
	Doc string
	// Fails are the declared failures. A family no Expect names must hold
	// every property.
	Fails []Expect
	// Varies, if set, says why the design's runs are not reproducible event
	// for event (its verdicts must be): reports then show only what does
	// not vary between two runs of one schedule.
	Varies string
}

// Expect declares that under each of Families exactly the properties Props
// fail, for the reason Why: the derivation, for a reader who has the
// design's rules and the family's definition in front of them.
type Expect struct {
	Families []Family
	Props    []Property
	Why      string
}

// Declarer is a design that declares itself. A design without it is
// expected to hold every property in every family, with no text.
type Declarer interface {
	Name() string
	Declare() Declaration
}

// DeclarationOf returns d's declaration (the empty one if d does not
// declare itself).
func DeclarationOf(d any) Declaration {
	if dd, ok := d.(Declarer); ok {
		return dd.Declare()
	}
	return Declaration{}
}

// Expected returns the properties the declaration says fail under f, in
// order (its world's Properties; nil: f holds everything).
func (d Declaration) Expected(f Family, order []Property) []Property {
	var out []Property
	for _, p := range order {
		for _, e := range d.Fails {
			if slices.Contains(e.Families, f) && slices.Contains(e.Props, p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Check reports the first way d is malformed in its world (checkFamily
// and props say which families and properties exist): an Expect with no
// family, no property or no derivation, an unknown family or property, or
// a family named by two Expects (each family's verdict is derived once).
func (d Declaration) Check(checkFamily func(Family) error, props []Property) error {
	seen := map[Family]int{}
	for i, e := range d.Fails {
		if len(e.Families) == 0 || len(e.Props) == 0 || e.Why == "" {
			return fmt.Errorf("Fails[%d]: an Expect needs families, properties and its derivation (Why)", i)
		}
		for _, f := range e.Families {
			if err := checkFamily(f); err != nil {
				return fmt.Errorf("Fails[%d]: %v", i, err)
			}
			if j, dup := seen[f]; dup {
				return fmt.Errorf("Fails[%d] and Fails[%d] both declare %s: derive each family's verdict once", j, i, f)
			}
			seen[f] = i
		}
		for _, p := range e.Props {
			if !slices.Contains(props, p) {
				return fmt.Errorf("Fails[%d]: unknown property %q", i, p)
			}
		}
	}
	return nil
}
