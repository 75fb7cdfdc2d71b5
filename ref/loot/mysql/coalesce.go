package mysql

import (
	"context"
	"sync"

	"github.com/onceproof/onceproof/internal/coalesce"
)

// Options.Batch: concurrent calls of one kind on one Store are coalesced
// (internal/coalesce) into one CALL per batch, so a burst of claims or
// settles costs the server one statement's parsing, one routine call and
// one network exchange instead of one each.

// batchers are the Store's coalescers under Options.Batch: claims
// (claimbatch.go), settles (settlebatch.go) and the Inventory's deliveries
// (deliverbatch.go).
type batchers struct {
	claim   claimBatch
	settle  settleBatch
	deliver deliverBatch
	stop    sync.Once
	cancel  context.CancelFunc
}

// batch options: one worker per kind, as ref/postgres measured (a second
// one splits the callers into smaller batches and competes for the
// database host's cores), batches of up to 256 (above the 64 concurrent
// callers the benchmarks run). On MariaDB too: two settle workers, -count 2
// of BenchmarkLoot/op=settle/impl=(ref-batched|doc)/conc=(16|64) at
// -benchtime 2000x, gave ref-batched/doc 0.65x and 0.63x at conc 16
// (server CPU 755-765 us a settle against one worker's 545-560, its
// batches of 2.7 settles instead of 4.8) and 0.92x and 0.87x at conc 64,
// where one worker gave 0.62-0.75x and 0.85-0.96x: with client and server
// on two cores the batches' size is what saves CPU, so halving it loses.
const (
	batchWorkers = 1
	maxBatch     = 256
)

// startBatchers starts every kind's batcher. Batches run under the
// store's lifetime, not one caller's context: each serves many callers,
// who return on their own contexts anyway.
func (s *Store) startBatchers() {
	life, cancel := context.WithCancel(context.Background())
	s.batch.cancel = cancel
	opts := coalesce.Options{Workers: batchWorkers, MaxBatch: maxBatch,
		Context: func() (context.Context, context.CancelFunc) { return life, func() {} }}
	s.batch.claim.start(s, opts)
	s.batch.settle.start(s, opts)
	s.batch.deliver.start(s, opts)
}

// stopBatchers closes the batchers once (Close is idempotent); a Store
// opened without Options.Batch has none.
func (s *Store) stopBatchers() {
	s.batch.stop.Do(func() {
		if s.batch.cancel == nil {
			return
		}
		s.batch.claim.close()
		s.batch.settle.close()
		s.batch.deliver.close()
		s.batch.cancel()
	})
}
