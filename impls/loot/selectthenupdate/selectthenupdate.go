// Package selectthenupdate is the loot row "select-then-update": the
// reference whose settle CAS is a read the application judges, then an
// unconditional write. Its declaration derives its verdicts.
package selectthenupdate

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
)

// Design is the row.
var Design = shortcut.Row{
	Row:   "select-then-update",
	Rules: table.Rules{SelectThenUpdate: true},
	Decl: engine.Declaration{
		Doc: "The reference whose settle CAS is split in two: a SELECT of the row that the application judges (CLAIMING, past the deadline, or a lapsed lease), then an UPDATE to SETTLING with the next fence that judges nothing: source 004's \"selsect 出来判断 status 再 update\". The settle lock and the fenced record still stand in front of and behind it, so most races are still caught; what gets through is a write landing on a row that changed between the two statements.",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.LockExpiry, lootfaults.CompensationRace},
			Props:    []engine.Property{lootfaults.ForwardOnly},
			Why:      "a settler reads CLAIMING, then stalls before its UPDATE past the lock's ttl and its lease; a second trigger (in compensation-race, whose stall may land at any settle call from the first on, the compensation tick's Recover, which settles the overdue session) takes the expired lock and settles the session to CLOSED; the first wakes and writes SETTLING over CLOSED (a closed session goes back), though its record is then refused by the fence (its value is stale), so nothing is granted twice",
		}, {
			Families: []engine.Family{lootfaults.CancelRace},
			Props:    []engine.Property{lootfaults.NoOverGrant, lootfaults.ForwardOnly, lootfaults.HonestAnswer},
			Why:      "a cancel interleaved between the settler's SELECT (CLAIMING) and its UPDATE is overwritten: CANCELED goes back to SETTLING, the fence the UPDATE bumped is the settler's, so its record closes the session and its item is delivered from a session the operator canceled; the cancel's accepted reply, if the overwrite lands before it, tells the operator canceled about a session that is no longer",
		}},
	},
}
