package mysql

import "github.com/onceproof/onceproof/internal/coalesce"

// settleBatch coalesces concurrent BeginSettle and RecordGrants calls
// under Options.Batch.
type settleBatch struct{}

func (b *settleBatch) start(s *Store, opts coalesce.Options) {}

func (b *settleBatch) close() {}
