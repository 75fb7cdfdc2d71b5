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
// it is the batches' size that saves the CPU, so halving it loses. With
// the settles' lanes gathering (below), two record workers gave 1.11x and
// 1.10x at conc 16 against one's 1.15x and 1.23x, in turn (a local edit).
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
	// They gather (coalesce.Options.Gather): a batch one lane answers
	// wakes its callers together for the next lane, and without it the
	// first of them found that lane's worker idle and went alone, in a
	// batch of one that cost a whole CALL, while the rest waited out its
	// round trip. Measured at conc 16 (a local count, not kept): 321 of
	// 679 begin batches and 198 of 568 record batches held one call
	// without it, 19-29 of 425-441 and 6-19 of 402-419 with it (two
	// runs). BenchmarkLoot op=settle, six runs each, the two builds in
	// turn (-benchtime 2000x, impl=(ref-batched|doc), conc=(16|64)),
	// ref-batched/doc:
	//
	//	conc 16  gather  1.18 1.18 1.20 1.15 1.11 1.21   sql-rtt/op 0.28-0.29
	//	         before  1.13 0.82 1.00 0.99 1.14 0.99   sql-rtt/op 0.42-0.43
	//	conc 64  gather  1.82 1.50 1.49 1.46 2.27 1.81   sql-rtt/op 0.08
	//	         before  1.89 1.78 1.41 1.85 1.49 1.73   sql-rtt/op 0.10-0.11
	//
	// and BenchmarkLootSettleDeliver, three runs each: conc 16 1.45 1.18
	// 1.23 against 1.01 1.10 1.05, conc 64 2.19 2.20 2.44 against 2.12
	// 1.79 2.16. The claims' lane does not gather: its callers come back
	// to it, not from another lane, and it was not measured.
	var crew coalesce.Crew
	settle := opts
	settle.Gather = true
	s.batch.settle.start(s, &crew, settle)
	s.batch.deliver.start(s, &crew, settle)
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
