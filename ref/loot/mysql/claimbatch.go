package mysql

import "github.com/onceproof/onceproof/internal/coalesce"

// claimBatch coalesces concurrent Claim calls under Options.Batch.
type claimBatch struct{}

func (b *claimBatch) start(s *Store, opts coalesce.Options) {}

func (b *claimBatch) close() {}
