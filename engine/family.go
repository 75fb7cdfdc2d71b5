package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Family is a fault family: a generator preset and a matrix column. Which
// names exist, and what each makes happen, is its World's business.
type Family string

// Join combines families into one generator preset whose schedules have
// every listed family's features at once, e.g. Join("late", "crash") is
// "late+crash".
func Join(fs ...Family) Family {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f)
	}
	return Family(strings.Join(parts, "+"))
}

// Parts splits a joined family into the families it combines ([f] for a
// plain family).
func (f Family) Parts() []Family {
	var out []Family
	for p := range strings.SplitSeq(string(f), "+") {
		out = append(out, Family(p))
	}
	return out
}

// CheckParts reports a part of f that is not one of known, naming the
// valid ones (noun says whose families they are: "family", "loot
// family"); nil when every part is known. A world's CheckFamily adds its
// own rules on which parts join.
func CheckParts(f Family, known []Family, noun string) error {
	for _, p := range f.Parts() {
		if !slices.Contains(known, p) {
			names := make([]string, len(known))
			for i, g := range known {
				names[i] = string(g)
			}
			return fmt.Errorf("unknown %s %q (want one of %s, or several joined with '+')", noun, string(p), strings.Join(names, ", "))
		}
	}
	return nil
}

// Property names a property a World judges. The names are constants of the
// world's packages, so designs can declare their expected verdicts without
// importing the checkers.
type Property string
