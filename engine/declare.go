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
	// Fails are the declared failures. A plain family no Expect names must
	// hold every property; a joined family (Join) no Expect names fails
	// what its parts are declared to fail (Expected says how), so the
	// joins a world runs by default (World.Joins) need no Expect of their
	// own unless the design fails one differently.
	Fails []Expect
	// Varies, if set, says why the design's runs are not reproducible event
	// for event (its verdicts must be): reports then show only what does
	// not vary between two runs of one schedule.
	Varies string
}

// Expect declares that under each of Families exactly the properties Props
// fail, for the reason Why: the derivation, for a reader who has the
// design's rules and the family's definition in front of them. An Expect
// with no Props declares that its families hold every property; only
// joined families may be so declared (a plain family holds unless
// declared otherwise), to overrule what their parts would derive.
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
//
// A family an Expect names (a join in any order of its parts) gets that
// Expect's Props. A joined family no Expect names fails the union of what
// its parts are declared to fail: a join's preset switches on every
// part's features at once, mostly drawn as the part alone draws them, so
// the schedules that make a part fail are mostly still drawn and the
// other parts add faults. That is a default, not a theorem, in both
// directions: the added faults can make a failure neither part shows
// (an interleaving only the two together draw), and a join can fail less
// than a part: a preset may drop a feature it cannot combine
// (lootfaults's late-claim stalls no claim handler when joined with a
// family that injects faults, and that stall is what fails
// check-then-claim's FrozenClaims), an added fault can wipe the state a
// part's failure needed, or make it too rare for the budget. The matrix
// reports either as a mismatch; the design then declares the join
// itself with its own derivation, which wins (with no Props if the join
// holds).
func (d Declaration) Expected(f Family, order []Property) []Property {
	if ps, ok := d.named(f); ok {
		return inOrder(ps, order)
	}
	var fail []Property
	if parts := f.Parts(); len(parts) > 1 {
		for _, p := range parts {
			ps, _ := d.named(p)
			fail = append(fail, ps...)
		}
	}
	return inOrder(fail, order)
}

// named returns the properties the Expects that name f declare, and
// whether any does (one that declares none says a join holds). Check
// allows one Expect per family, but a world that does not run Check on
// its designs may have several, each deriving some of the properties
// (lock-only's concurrent-settle): their union is the verdict.
func (d Declaration) named(f Family) ([]Property, bool) {
	key := f.key()
	var ps []Property
	ok := false
	for _, e := range d.Fails {
		if slices.ContainsFunc(e.Families, func(g Family) bool { return g.key() == key }) {
			ps, ok = append(ps, e.Props...), true
		}
	}
	return ps, ok
}

// inOrder returns the properties of order that ps contains, in order's
// order, each once.
func inOrder(ps, order []Property) []Property {
	var out []Property
	for _, p := range order {
		if slices.Contains(ps, p) {
			out = append(out, p)
		}
	}
	return out
}

// Check reports the first way d is malformed in its world (checkFamily
// and props say which families and properties exist): an Expect with no
// family or no derivation, with no property for a plain family, an
// unknown family or property, or a family named by two Expects (each
// family's verdict is derived once; a join is the same family in any
// order of its parts).
func (d Declaration) Check(checkFamily func(Family) error, props []Property) error {
	seen := map[Family]int{}
	for i, e := range d.Fails {
		if len(e.Families) == 0 || e.Why == "" {
			return fmt.Errorf("Fails[%d]: an Expect needs families and its derivation (Why)", i)
		}
		for _, f := range e.Families {
			if err := checkFamily(f); err != nil {
				return fmt.Errorf("Fails[%d]: %v", i, err)
			}
			if len(e.Props) == 0 && len(f.Parts()) == 1 {
				return fmt.Errorf("Fails[%d]: an Expect with no property declares a join that holds, and %s is not a join (a plain family holds unless an Expect says it fails)", i, f)
			}
			if j, dup := seen[f.key()]; dup {
				return fmt.Errorf("Fails[%d] and Fails[%d] both declare %s: derive each family's verdict once", j, i, f)
			}
			seen[f.key()] = i
		}
		for _, p := range e.Props {
			if !slices.Contains(props, p) {
				return fmt.Errorf("Fails[%d]: unknown property %q", i, p)
			}
		}
	}
	return nil
}

// key names f's set of parts, sorted, each once: the presets build a join
// from its parts' features regardless of their order (faults.presetOf and
// lootfaults's switch on each part in turn), so "crash+late" is the family
// "late+crash" is, and a declaration of one is a declaration of the other.
func (f Family) key() Family {
	parts := f.Parts()
	if len(parts) == 1 {
		return f
	}
	slices.Sort(parts)
	return Join(slices.Compact(parts)...)
}
