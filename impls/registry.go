package impls

import "github.com/onceproof/onceproof/engine"

// Registry is one subject's designs in matrix row order, looked up by row
// name: All's for settlements, impls/loot's All for loot allocation. Row
// names are unique within a registry (each All's test says so), so ByName
// has one answer.
type Registry[D engine.Design] []D

// Names returns the row names of r, in order.
func (r Registry[D]) Names() []string {
	out := make([]string, len(r))
	for i, d := range r {
		out[i] = d.Name()
	}
	return out
}

// ByName returns the design of r whose row name is name, and false (with
// the zero D) when r has none.
func (r Registry[D]) ByName(name string) (D, bool) {
	for _, d := range r {
		if d.Name() == name {
			return d, true
		}
	}
	var zero D
	return zero, false
}
