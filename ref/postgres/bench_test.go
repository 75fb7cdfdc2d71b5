package postgres_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testserver"
	"github.com/onceproof/onceproof/ref/postgres"
	"github.com/onceproof/onceproof/ref/storetest"
)

// benchConns overrides the pool size of the single-statement store (default:
// one connection per caller). On the 2-core test machine 16 connections
// served 64 callers best (10.4k claims/s against 7.6k with 64): compare
// against that too before quoting a ratio.
var benchConns = flag.Int("pgconns", 0, "pool size of backend=postgres in BenchmarkStore (0: one per caller)")

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
					opts.Config = func(c *pgxpool.Config) { c.MaxConns = int32(cmp.Or(*benchConns, conc)) }
				}
				s, err := postgres.Open(context.Background(), url, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				storetest.BenchClaimCommit(b, s, conc)
			})
		}
	}
}
