// Package nodeadlineincas is the loot row "no-deadline-in-cas": the
// reference whose settle CAS does not judge the deadline. Its declaration
// derives its verdicts.
package nodeadlineincas

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
)

// Design is the row.
var Design = shortcut.Row{
	Row:   "no-deadline-in-cas",
	Rules: table.Rules{NoDeadlineInCAS: true},
	Decl: engine.Declaration{
		Doc: "The reference whose settle CAS does not judge the deadline: CLAIMING becomes SETTLING whenever a settler asks. Source 004's own conditional UPDATE has the deadline (\"deadline_at <= NOW()\") and says why: a settle triggered early would skip the claim window.",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.EarlySettle, lootfaults.ClockSkew},
			Props:    []engine.Property{lootfaults.OnTime},
			Why:      "a trigger before the deadline (a player's, or a scheduler whose clock runs ahead) wins the CAS and freezes the claims early; members claiming in the rest of the window are refused, honestly, and the result stands",
		}},
	},
}
