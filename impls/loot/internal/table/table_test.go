package table_test

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/impls/loot/internal/table"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// The shortcut rows' store, with no rule broken, is a loot.Store: it
// passes the conformance suite every store of the reference passes, so a
// row's failures come from its one switch.
func TestTableWithNoRuleBrokenPassesTheStoreSuite(t *testing.T) {
	loottest.Run(t, func(t *testing.T) loottest.Harness {
		clock := memory.NewClock(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC))
		db := table.NewDB(clock.Now)
		return loottest.Harness{
			Open:    func(*testing.T) loot.Store { return table.Store{DB: db} },
			Now:     func(*testing.T) time.Time { return clock.Now() },
			Advance: func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		}
	})
}
