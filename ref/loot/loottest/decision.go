package loottest

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// DecisionFor returns the settler's Decision for fz, whose one claim is
// player p's (fairness zero, lease lease), as a function of the loot code
// its grant is recorded under: a store test hands RecordGrants values the
// Service would refuse (a NUL, invalid UTF-8, an over-long grant number)
// and checks the store's own answer.
func DecisionFor(t *testing.T, fz loot.Frozen, p loot.PlayerID, lease time.Duration) func(lootCode string) loot.Decision {
	t.Helper()
	decided, err := loot.Decide(fz, map[loot.PlayerID]loot.Fairness{p: {}}, lease)
	if err != nil || len(decided.Grants) != 1 {
		t.Fatalf("Decide: %+v, %v; want one grant", decided, err)
	}
	return func(lootCode string) loot.Decision {
		d := decided
		g := d.Grants[0]
		g.Loot, g.No = lootCode, loot.GrantNo(fz.Session.No, p, lootCode)
		d.Grants = []loot.Grant{g}
		return d
	}
}
