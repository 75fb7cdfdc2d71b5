// Package appclockdeadline is the loot row "app-clock-deadline": the
// reference that judges deadlines by the node's clock, not the database's.
// Its declaration derives its verdicts.
package appclockdeadline

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
)

// Design is the row.
var Design = shortcut.Row{
	Row:      "app-clock-deadline",
	AppClock: true,
	Decl: engine.Declaration{
		Doc: "The reference judging deadlines by the node's clock instead of the database's, in the claim's write and the settle CAS: source 004's submitIntent compares with LocalDateTime.now() on the node serving the request.",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.ClockSkew},
			Props:    []engine.Property{lootfaults.OnTime, lootfaults.HonestAnswer},
			Why:      "a node whose clock runs ahead judges the deadline passed before the database's clock reaches it: its scheduler's trigger wins the CAS early, and the claim window closes seconds short on it: a member's claim there is refused as too late while the session is CLAIMING before its deadline, so the player loses the item without anything recording it (claims stay stamped by the database's clock, so the ranking stands)",
		}},
	},
}
