package mysql

import "github.com/onceproof/onceproof/internal/coalesce"

// deliverBatch coalesces concurrent Inventory.DeliverBatch calls under
// Options.Batch.
type deliverBatch struct{}

func (b *deliverBatch) start(s *Store, opts coalesce.Options) {}

func (b *deliverBatch) close() {}
