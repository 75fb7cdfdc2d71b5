// Package loot registers every design of the loot matrix, in row order:
// the reference, source 004's logic verbatim, then one row per shortcut,
// each named after the rule it breaks. Each design lives in its own
// package below and declares itself (engine.Declaration).
package loot

import (
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/appclockdeadline"
	"github.com/onceproof/onceproof/impls/loot/checkthenclaim"
	"github.com/onceproof/onceproof/impls/loot/closedbeforegrants"
	"github.com/onceproof/onceproof/impls/loot/compensationnewkey"
	"github.com/onceproof/onceproof/impls/loot/lockonly"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/impls/loot/nodeadlineincas"
	"github.com/onceproof/onceproof/impls/loot/nomembership"
	"github.com/onceproof/onceproof/impls/loot/nonatomicunlock"
	"github.com/onceproof/onceproof/impls/loot/notiebreak"
	"github.com/onceproof/onceproof/impls/loot/seedverbatim"
	"github.com/onceproof/onceproof/impls/loot/selectthenupdate"
	"github.com/onceproof/onceproof/impls/loot/uuidgrantkey"
)

// Registry is a list of loot designs, looked up by row name.
type Registry []lootfaults.Design

// All returns every loot design in matrix row order.
func All() Registry {
	return Registry{
		lootref.Design{},
		seedverbatim.Design{},
		selectthenupdate.Design,
		lockonly.Design,
		uuidgrantkey.Design,
		nonatomicunlock.Design,
		notiebreak.Design{},
		nomembership.Design,
		nodeadlineincas.Design,
		closedbeforegrants.Design,
		compensationnewkey.Design,
		appclockdeadline.Design,
		checkthenclaim.Design,
	}
}

// Names returns the row names of r, in order.
func (r Registry) Names() []string {
	out := make([]string, len(r))
	for i, d := range r {
		out[i] = d.Name()
	}
	return out
}

// ByName returns the design of r whose row name is name.
func (r Registry) ByName(name string) (lootfaults.Design, bool) {
	for _, d := range r {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}
