// Package closedbeforegrants is the loot row "closed-before-grants": the
// reference that closes the session in one statement and inserts its grants
// in a second. Its declaration derives its verdicts.
package closedbeforegrants

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
)

// Design is the row.
var Design = shortcut.Row{
	Row:   "closed-before-grants",
	Rules: table.Rules{ClosedBeforeGrants: true},
	Decl: engine.Declaration{
		Doc: "The reference whose record is two statements: the session closes (with its snapshot) first, its PENDING grants are inserted second, as a settler does that marks a session closed before it writes what closing means.",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.Crash, lootfaults.StoreError, lootfaults.TimeoutSuccess},
			Props:    []engine.Property{lootfaults.NoLostGrant, lootfaults.Replayable},
			Why:      "a crash between the two statements, a failed insert, or a close that timed out after it landed (the settler gives up, and its retry finds the session CLOSED: already settled) leaves a CLOSED session whose snapshot names winners and no grant row: compensation delivers only grants it can lease, so the winners never get their items, and the snapshot's winners are not the grants on record",
		}},
	},
}
