package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
)

// benchConcs are the concurrency levels: one caller, a busy node, and
// a burst (64, where batching must reach 5x one statement per claim).
var benchConcs = []int{1, 16, 64}

// BenchmarkStore measures one claim + commit (Begin of a fresh key, then
// Commit(Delivered)), the store's share of every settlement, with C callers
// at once. backend=postgres runs one statement per call on a pool of C
// connections (its best case: every caller has its own connection);
// backend=postgres-batched coalesces concurrent calls on the default pool.
//
//	go test -run '^$' -bench BenchmarkStore ./ref/postgres
func BenchmarkStore(b *testing.B) {
	url := testserver.Postgres(b)
	for _, batched := range []bool{false, true} {
		name := "postgres"
		if batched {
			name = "postgres-batched"
		}
		for _, conc := range benchConcs {
			b.Run(fmt.Sprintf("backend=%s/conc=%d", name, conc), func(b *testing.B) {
				opts := postgres.Options{Table: newTable(), Batch: batched}
				if !batched {
					opts.Config = func(c *pgxpool.Config) { c.MaxConns = int32(conc) }
				}
				s, err := postgres.Open(context.Background(), url, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				runClaimCommit(b, s, conc)
			})
		}
	}
}

// runClaimCommit runs b.N claim+commit pairs on fresh keys from conc
// goroutines and reports ops/s (what the 5x target compares).
func runClaimCommit(b *testing.B, s ref.Store, conc int) {
	ctx := context.Background()
	payload := []byte("player=1234567 room=42 amount=+100")
	lease := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				k := ref.KeyOf(0xbe7c, uint64(i))
				if _, created, err := s.Begin(ctx, ref.Claim{Key: k, Payload: payload, LeaseUntil: lease}); err != nil || !created {
					b.Errorf("Begin: created=%v err=%v", created, err)
					return
				}
				if err := s.Commit(ctx, k, ref.StateDelivered); err != nil {
					b.Errorf("Commit: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}
