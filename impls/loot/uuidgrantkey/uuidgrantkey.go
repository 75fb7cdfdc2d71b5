// Package uuidgrantkey is the loot row "uuid-grant-key": the reference
// delivering every grant under a fresh key (a UUID per call) instead of
// its recorded grant number. Its declaration derives its verdicts.
package uuidgrantkey

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
)

// Design is the row.
var Design = shortcut.Row{
	Row:  "uuid-grant-key",
	Wire: shortcut.Rekeyed(func(shortcut.Wiring) bool { return true }),
	Decl: engine.Declaration{
		Doc: "The reference delivering every grant under a fresh key (a UUID per call) instead of its recorded grant number: the key source 004 warns against (\"千万不要用 UUID 做幂等键\"). Grants are still recorded once, by their grant number, and the settler delivers its own grants once; the inventory can no longer recognise a second delivery of the same grant.",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.Crash, lootfaults.StoreError, lootfaults.TimeoutSuccess, lootfaults.CompensationRace},
			Props:    []engine.Property{lootfaults.NoOverGrant, lootfaults.NoDupGrant},
			Why:      "a delivery that landed but whose grant stayed PENDING (the node crashed before marking it, the mark failed, or the inventory call timed out after applying the item; or, in compensation-race, the settler stalled between its delivery and its mark) is delivered again by compensation once its lease ends, under a new key: the inventory applies it, and the winner holds two items of a drop of one",
		}},
	},
}
