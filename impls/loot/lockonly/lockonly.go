// Package lockonly is the loot row "lock-only": the reference with no
// conditional write at all in its settle: the lock is the only guard. Its
// declaration derives its verdicts.
package lockonly

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
)

// Design is the row.
var Design = shortcut.Row{
	Row:   "lock-only",
	Rules: table.Rules{NoCAS: true},
	Decl: engine.Declaration{
		Doc: "The reference with no conditional write in its settle at all: BeginSettle writes SETTLING with the next fence whatever the row says, and RecordGrants closes the session with its grants whatever its status and fence; the Redis lock (SET NX PX, compare-and-delete) is the only thing between two settlers. Claims are still judged in their write, and every delivery is keyed by the recorded grant number, so no item is granted twice: what breaks is the state machine and the deadline.",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.ConcurrentSettle, lootfaults.LockExpiry, lootfaults.Crash, lootfaults.StoreError, lootfaults.TimeoutSuccess, lootfaults.CompensationRace},
			Props:    []engine.Property{lootfaults.ForwardOnly},
			Why:      "a second settle after the first released its lock (a trigger on another node, a retry after a lost answer or a failed call, or one that takes a lock whose holder stalled past its ttl: in compensation-race the settler stalls at any of its calls from the first on, so one stalled before its BeginSettle past the lock's ttl wakes after compensation's Recover took the expired lock and closed the session) meets no refusal: its BeginSettle writes SETTLING over CLOSED and its record closes the session again; the grant numbers and the ranking are the same, so the inventory applies nothing twice",
		}, {
			Families: []engine.Family{lootfaults.ConcurrentSettle},
			Props:    []engine.Property{lootfaults.HonestAnswer},
			Why:      "when the second settler takes the lock in the step between the first's unlock and its answer, and writes SETTLING before that answer, the first answers accepted about a session that is SETTLING again (the second closes it a moment later, with the same grants): rare, one interleaving in about 500, so the cell runs lootprops.DeepN schedules",
		}, {
			Families: []engine.Family{lootfaults.EarlySettle, lootfaults.ClockSkew},
			Props:    []engine.Property{lootfaults.OnTime, lootfaults.ForwardOnly},
			Why:      "nothing judges the deadline: a trigger before it (a player, or a scheduler whose clock runs ahead) freezes and settles the session early, and the scheduler's own trigger at the deadline settles it again over CLOSED",
		}, {
			Families: []engine.Family{lootfaults.CancelRace},
			Props:    []engine.Property{lootfaults.NoOverGrant, lootfaults.ForwardOnly, lootfaults.HonestAnswer},
			Why:      "a cancel before or during the settle is overwritten: BeginSettle writes CANCELED back to SETTLING and the record closes it and grants, so a canceled session delivers its item; and when the settle lands while the cancel's reply is on the wire, the operator is told canceled about a session that is CLOSED",
		}},
	},
}
