package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/onceproof/onceproof/ref/loot"
)

// Inventory is the Store's own inventory: Deliver writes the item into
// loot_inventory, keyed by the unique grant_no, and marks the grant SUCCESS
// in the same transaction, so an item is in a player's inventory exactly
// when its grant is SUCCESS, and at most once (memory.Inventory's
// counterpart). A game whose inventory lives in this database reads
// loot_inventory, or writes its own rows in the same way.
type Inventory struct {
	s *Store
}

var _ loot.Inventory = (*Inventory)(nil)

// Inventory returns the inventory kept in s's database.
func (s *Store) Inventory() *Inventory { return &Inventory{s: s} }

// Deliver implements loot.Inventory in one round trip (oneTrip): in one
// transaction, the grant's UPDATE to SUCCESS (its row lock first, the order
// MarkDelivered takes), then the ledger row copied from the recorded grant
// (never from g: an inventory in the same database does not take the
// caller's word for a grant), and whether the grant exists. A grant
// number that was never recorded is loot.ErrNotFound.
func (inv *Inventory) Deliver(ctx context.Context, g loot.Grant) error {
	s := inv.s
	exists, err := oneTrip(ctx, s, s.q.deliverTx, []any{g.No, g.No, g.No}, func(rows *sql.Rows) (n int64, err error) {
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return 0, err
			}
		}
		return n, rows.Err()
	})
	if err == nil && exists == 0 {
		err = fmt.Errorf("grant %q: %w", g.No, loot.ErrNotFound)
	}
	return wrap("deliver "+g.No, err) // else delivered now, or before
}

// Applied returns how many times grant grantNo's item was applied: 0 or 1
// (the ledger's rows for it; uk_inventory_grant allows no more).
func (inv *Inventory) Applied(ctx context.Context, grantNo string) (int, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return 0, wrap("applied "+grantNo, err)
	}
	var n int
	err := inv.s.db.QueryRowContext(ctx, inv.s.q.applied, grantNo).Scan(&n)
	return n, wrap("applied "+grantNo, err)
}
