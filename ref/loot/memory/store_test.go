package memory_test

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// base is the harness clocks' origin: an arbitrary instant with
// sub-microsecond digits, which the store must truncate.
var base = time.Date(2026, 3, 1, 12, 0, 0, 789, time.UTC)

// TestStoreConformance runs the Store suite on Store, with its own
// Inventory. Every Open returns the same *Store: its "durable data" is the
// process's memory, shared by every handle.
func TestStoreConformance(t *testing.T) {
	loottest.Run(t, func(t *testing.T) loottest.Harness {
		clock := memory.NewClock(base)
		s := memory.NewStore(clock.Now)
		return loottest.Harness{
			Open:      func(*testing.T) loot.Store { return s },
			Now:       func(*testing.T) time.Time { return clock.Now() },
			Advance:   func(_ *testing.T, d time.Duration) { clock.Advance(d) },
			Inventory: func(_ *testing.T, st loot.Store) loot.Inventory { return st.(*memory.Store).Inventory() },
			Applied:   func(_ *testing.T, no string) int { return s.Applied(no) },
		}
	})
}

// TestLockConformance runs the Lock suite on Lock with its own clock.
func TestLockConformance(t *testing.T) {
	loottest.RunLock(t, func(t *testing.T) loottest.LockHarness {
		clock := memory.NewClock(base)
		l := memory.NewLock(clock.Now)
		return loottest.LockHarness{
			Open:    func(*testing.T) loot.Lock { return l },
			Advance: func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		}
	})
}
