package memory

import (
	"context"
	"fmt"

	"github.com/onceproof/onceproof/ref/loot"
)

// Inventory is the Store's own inventory: Deliver applies the item and
// marks the grant SUCCESS under the store's lock, keyed by the grant
// number, so an item is in a player's inventory exactly when its grant is
// SUCCESS, and at most once (the SQL stores' counterpart writes the item
// row, keyed by a UNIQUE grant_no, and the grant in one transaction).
type Inventory struct {
	s *Store
}

var _ loot.BatchInventory = (*Inventory)(nil)

// Inventory returns the inventory kept in s.
func (s *Store) Inventory() *Inventory { return &Inventory{s: s} }

// Deliver implements loot.Inventory. It delivers only grants recorded in
// its store (ErrNotFound otherwise): an inventory in the same store never
// takes the caller's word for a grant.
func (inv *Inventory) Deliver(ctx context.Context, g loot.Grant) error {
	return inv.DeliverBatch(ctx, []loot.Grant{g})
}

// DeliverBatch implements loot.BatchInventory: every grant of gs under
// one hold of the store's lock, all or none (a grant not recorded is
// ErrNotFound and nothing is applied), the SQL stores' one statement.
func (inv *Inventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	s := inv.s
	if _, err := s.enter(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, g := range gs {
		if _, ok := s.grants[g.No]; !ok {
			return fmt.Errorf("memory: deliver %q: %w", g.No, loot.ErrNotFound)
		}
	}
	for _, g := range gs {
		rec := s.grants[g.No]
		if s.applied[rec.No] > 0 {
			continue
		}
		s.applied[rec.No]++
		s.holdings[holding{rec.Player, rec.Loot}] += rec.Quantity
		rec.Status = loot.GrantSuccess
	}
	return nil
}

// Applied returns how many times grant grantNo's item was applied: 0 or 1
// for a correct inventory (the ledger the conformance suite reads).
func (s *Store) Applied(grantNo string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied[grantNo]
}

// Holding returns how many items of loot code lootCode player holds.
func (s *Store) Holding(player loot.PlayerID, lootCode string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holdings[holding{player, lootCode}]
}
