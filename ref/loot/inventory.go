package loot

import "context"

// Inventory puts granted items into players' inventories: the effect the
// whole allocation exists for.
//
// Contract:
//   - Deliver applies grant g (one g.Loot item of quantity g.Quantity to
//     g.Player) at most once per g.No: a Deliver of a grant number already
//     applied does nothing and returns nil. This is what lets the settler,
//     a takeover settler and every compensation pass deliver the same grant
//     without ever delivering it twice: they all use the recorded g.No,
//     never a new key.
//   - nil means the item is durably in the inventory. An error means the
//     outcome is unknown (a timeout after the item landed is the usual
//     case): the grant stays PENDING and compensation delivers it again,
//     with the same g.No, after its lease.
//   - An external inventory service must key its ledger by g.No with a
//     unique constraint, in the same transaction as the item. An inventory
//     in the same database as the Store (memory.Store.Inventory) can also
//     mark the grant SUCCESS in that transaction: exactly once end to end.
//   - Safe for concurrent use.
//
// An Inventory that can take a settle's grants in one call implements
// BatchInventory too; the Service then delivers a batch in one call.
type Inventory interface {
	Deliver(ctx context.Context, g Grant) error
}

// BatchInventory is an Inventory that takes a settle's grants in one call.
type BatchInventory interface {
	Inventory
	// DeliverBatch applies every grant in gs, each at most once by its grant number (a grant already
	// applied is not applied again and is no error), or returns an error, after which any subset
	// may have been applied (the caller redelivers the batch by the same numbers).
	DeliverBatch(ctx context.Context, gs []Grant) error
}

// DistinctNos are the grant numbers of gs, each once, in the order they
// first appear: what a BatchInventory applies (a number repeated in a
// batch is one delivery, and a statement keyed by the numbers must see
// each once).
func DistinctNos(gs []Grant) []string {
	seen := make(map[string]bool, len(gs))
	nos := make([]string, 0, len(gs))
	for _, g := range gs {
		if !seen[g.No] {
			seen[g.No] = true
			nos = append(nos, g.No)
		}
	}
	return nos
}
