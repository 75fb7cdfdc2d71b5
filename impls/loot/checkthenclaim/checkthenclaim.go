// Package checkthenclaim is the loot row "check-then-claim": the reference
// whose claim is judged by a read, then written by an unconditional upsert.
// Its declaration derives its verdicts.
package checkthenclaim

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
)

// Design is the row.
var Design = shortcut.Row{
	Row:   "check-then-claim",
	Rules: table.Rules{CheckThenClaim: true},
	Decl: engine.Declaration{
		Doc: "The reference whose claim is judged by a read (member, CLAIMING, before the deadline) and written by an unconditional upsert, two statements: source 004's submitIntent (\"先校验后写\").",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.LateClaim},
			Props:    []engine.Property{lootfaults.FrozenClaims},
			Why:      "a claim handler stalled between its check and its upsert, just before the deadline, writes its claim after the settle at the deadline froze the set: the claim is answered accepted although the result was computed without it",
		}},
	},
}
