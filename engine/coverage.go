package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Coverage counts what runs reached, by name (a world's Reached lists the
// names it counts): how deep a "holds" looked. Counts of several runs add
// up.
type Coverage map[string]int

// Merge adds o's counts to c (c must not be nil).
func (c Coverage) Merge(o Coverage) {
	for k, v := range o {
		c[k] += v
	}
}

// Format lists the non-zero counts in order: "crash 12, give-up 3", or
// "nothing".
func (c Coverage) Format(order []string) string {
	var parts []string
	for _, k := range order {
		if n := c[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Unexercised lists what family f exists to make happen (exercises, per
// part of a joined family) and c never reached: empty when the runs tested
// what the family's column claims.
func Unexercised(f Family, exercises func(Family) []string, c Coverage) []string {
	var out []string
	for _, p := range f.Parts() {
		for _, k := range exercises(p) {
			if c[k] == 0 && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}
