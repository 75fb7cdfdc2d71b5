package inventory_test

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// TestHTTPInventoryPassesTheStoreSuiteEndToEnd runs ref/loot's
// conformance suite on the memory store with its items delivered over
// HTTP, by lootd's client to this server: the suite's exactly-once
// checks (a settler dead after one delivery, then four concurrent
// Recovers on two nodes and direct redeliveries; settles racing cancels)
// must find each item applied once, counted in the server's ledger. The
// server plays no fault here: those checks demand that every Recover and
// Deliver succeed, which an inventory that fails cannot give in one pass
// (client_test.go and lootd's e2e tests fault it).
func TestHTTPInventoryPassesTheStoreSuiteEndToEnd(t *testing.T) {
	loottest.Run(t, func(t *testing.T) loottest.Harness {
		clock := memory.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 789, time.UTC))
		s := memory.NewStore(clock.Now)
		srv := start(t, nil)
		c := client(t, srv.URL(), 3)
		return loottest.Harness{
			Open:      func(*testing.T) loot.Store { return s },
			Now:       func(*testing.T) time.Time { return clock.Now() },
			Advance:   func(_ *testing.T, d time.Duration) { clock.Advance(d) },
			Inventory: func(*testing.T, loot.Store) loot.Inventory { return c },
			Applied: func(_ *testing.T, no string) int {
				n := 0
				for _, d := range srv.Deliveries() {
					if d.Key == no && d.Outcome == inventory.Applied {
						n++
					}
				}
				return n
			},
		}
	})
}
