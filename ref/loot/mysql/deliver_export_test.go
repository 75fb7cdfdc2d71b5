package mysql

import (
	"context"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// DeliverCalls is deliverCalls for the external tests: one batch of
// Inventory.DeliverBatch calls, each its distinct grant numbers, as the
// delivery batcher would run it (a fresh answer for each).
func (s *Store) DeliverCalls(ctx context.Context, qs [][]string) []coalesce.Result[[]loot.Grant] {
	rs := make([]coalesce.Result[[]loot.Grant], len(qs))
	s.deliverCalls(ctx, qs, rs)
	return rs
}
