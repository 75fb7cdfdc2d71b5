// Package nomembership is the loot row "no-membership": the reference whose
// claim is not judged against the team snapshot. Its declaration derives its
// verdicts.
package nomembership

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
)

// Design is the row.
var Design = shortcut.Row{
	Row:   "no-membership",
	Rules: table.Rules{NoMembership: true},
	Decl: engine.Declaration{
		Doc: "The reference whose claim is not judged against the team snapshot: source 004's submitIntent, which checks status and deadline but never membership (a claim with a known session number is enough).",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.Outsider},
			Props:    []engine.Property{lootfaults.NoLostGrant, lootfaults.MembersOnly},
			Why:      "an outsider's claim is recorded (the team snapshot is never read); the reference's settler then refuses to record a result its own audit would not replay (Decide replays the snapshot, and a non-member's claim fails it), so every settle and takeover stops there and the session stays SETTLING with no winner served: the write-time check is what keeps the settle possible",
		}},
	},
}
