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
// callers the benchmarks run). On MariaDB too, with the settles' batcher
// started with Workers: 2 (a local edit of startBatchers), -count 2 of
//
//	go test ./ref/loot/mysql -run '^$' -bench 'BenchmarkLoot$/op=settle/impl=(ref-batched|doc)/conc=(16|64)' -benchtime 2000x
//
// gave ref-batched/doc 0.65x and 0.63x at conc 16 and 0.92x and 0.87x at
// conc 64, where one worker, minutes before (the whole BenchmarkLoot,
// same flags), gave 0.62x and 0.75x, 0.96x and 0.85x. Two workers' server
// CPU at conc 16 was 755-765 us a settle against one's 545-560, their
// batches 2.7 settles a CALL against 4.8 (a settle's 2 CALLs over
// sql-rtt/op 0.746 and 0.419): client and server share two cores, and
// it is the batches' size that saves the CPU, so halving it loses.
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
	// A settle's calls follow each other (BeginSettle, RecordGrants,
	// DeliverBatch), so their lanes share one count of callers in flight.
	var crew coalesce.Crew
	s.batch.settle.start(s, &crew, opts)
	s.batch.deliver.start(s, &crew, opts)
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
