// Package loot registers every design of the loot matrix, in row order:
// the reference, source 004's logic verbatim, then one row per shortcut,
// each named after the rule it breaks. A design with code of its own lives
// in its own package below; the shortcuts, the reference with one rule
// broken, are a table (internal/shortcut/variants.go). Each declares itself
// (engine.Declaration).
package loot

import (
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/impls/loot/notiebreak"
	"github.com/onceproof/onceproof/impls/loot/seedverbatim"
)

// All returns every loot design in matrix row order.
func All() impls.Registry[lootfaults.Design] {
	return impls.Registry[lootfaults.Design]{
		lootref.Design{},
		seedverbatim.Design{},
		shortcut.SelectThenUpdate,
		shortcut.LockOnly,
		shortcut.UUIDGrantKey,
		shortcut.NonatomicUnlock,
		notiebreak.Design{},
		shortcut.NoMembership,
		shortcut.NoDeadlineInCAS,
		shortcut.ClosedBeforeGrants,
		shortcut.CompensationNewKey,
		shortcut.AppClockDeadline,
		shortcut.CheckThenClaim,
	}
}
