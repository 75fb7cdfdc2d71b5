// Package compensationnewkey is the loot row "compensation-new-key": the
// reference whose compensation (Recover) delivers a pending grant under a
// fresh key, while the settler delivers under the recorded grant number.
// Its declaration derives its verdicts.
package compensationnewkey

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
)

// Design is the row.
var Design = shortcut.Row{
	Row:  "compensation-new-key",
	Wire: shortcut.Rekeyed(func(w shortcut.Wiring) bool { return w.Compensating.Load() }),
	Decl: engine.Declaration{
		Doc: "The reference whose compensation (Recover) delivers a PENDING grant under a fresh key, while the settler delivers under the recorded grant number: a compensation job that re-keys its retries, which source 004 forbids (\"补偿任务同样要用幂等键去重，不能因为补偿就重发一次\").",
		Fails: []engine.Expect{{
			Families: []engine.Family{lootfaults.Crash, lootfaults.StoreError, lootfaults.TimeoutSuccess, lootfaults.CompensationRace},
			Props:    []engine.Property{lootfaults.NoOverGrant, lootfaults.NoDupGrant},
			Why:      "the same as uuid-grant-key, because the settler never delivers a grant twice on its own: every second delivery comes from compensation, after a delivery that landed but stayed PENDING (a crash before the mark, a failed mark, a timeout after the item was applied, or a settler stalled between delivery and mark while compensation's lease ended); re-keying compensation alone is as bad as re-keying everything",
		}},
	},
}
