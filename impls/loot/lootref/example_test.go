package lootref_test

import (
	"context"
	"fmt"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// memTables stands for a loot database the caller opened: one store,
// emptied in place between runs, its test clock the world's.
type memTables struct{ lootref.Store }

// ExampleOnStore runs loot-ref on a store of the caller's under the loot
// families, as a user's test would with lootprops.TestDesign(t, d) on their
// own PostgreSQL store: SetClock an UPDATE of its test clock table, Empty a
// TRUNCATE of its tables.
func ExampleOnStore() {
	clock := &settable{}
	st := &memTables{memory.NewStore(clock.Now)}
	d := lootref.OnStore(lootref.Where{DB: "memory"}, st, lootref.Options{
		SetClock: clock.Set,
		Empty:    func(context.Context) error { st.Store = memory.NewStore(clock.Now); return nil },
	})
	m := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{d}, Families: []engine.Family{lootfaults.Families.Clean, lootfaults.Families.Crash}, N: 5})
	fmt.Println(d.Name(), "mismatching cells:", len(m.Mismatches()), "store failures:", d.Err())
	// Output: loot-ref@memory mismatching cells: 0 store failures: <nil>
}
