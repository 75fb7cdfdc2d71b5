package postgres_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
	"github.com/onceproof/onceproof/ref/storetest"
)

// benchConns overrides the pool size of the single-statement store (default:
// one connection per caller). On the 2-core test machine 16 connections
// served 64 callers best (10.4k claims/s against 7.6k with 64): compare
// against that too before quoting a ratio.
var benchConns = flag.Int("pgconns", 0, "pool size of backend=postgres in BenchmarkStore (0: one per caller)")

// benchWorkers overrides Options.BatchWorkers of backend=postgres-batched, to
// compare before changing the default.
var benchWorkers = flag.Int("pgworkers", 0, "Options.BatchWorkers of backend=postgres-batched (0: the default)")

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
		for _, conc := range benchConcs {
			b.Run(fmt.Sprintf("backend=%s/conc=%d", backendName(batched), conc), func(b *testing.B) {
				storetest.BenchClaimCommit(b, openBench(b, url, batched, conc), conc)
			})
		}
	}
}

// BenchmarkSettle measures the seed-form Settle (window miss, then the
// claim) on fresh fingerprints with C callers: on this Store (a
// ref.DeliveredClaimer) one claim is one INSERT ... ON CONFLICT of a row born
// Delivered, so backend=postgres is exactly one statement per claim and
// backend=postgres-batched the same claims coalesced into multi-row
// statements. It reports settles/s.
//
//	go test -run '^$' -bench 'BenchmarkSettle//conc=64' -benchtime=20000x -count=3 ./ref/postgres
func BenchmarkSettle(b *testing.B) {
	url := testserver.Postgres(b)
	for _, batched := range []bool{false, true} {
		for _, conc := range benchConcs {
			b.Run(fmt.Sprintf("backend=%s/conc=%d", backendName(batched), conc), func(b *testing.B) {
				st := ref.NewSettler(ref.NewWindow(time.Minute, 64), openBench(b, url, batched, conc))
				nonce := uint64(time.Now().UnixNano()) // fresh keys on every run against one database
				now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				var (
					next atomic.Int64
					wg   sync.WaitGroup
					bad  atomic.Int64
				)
				b.ResetTimer()
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							if _, fresh := st.Settle(ref.FingerprintOf(0x5e77, nonce, uint64(i)), now); !fresh {
								bad.Add(1)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				if n := bad.Load(); n > 0 {
					b.Fatalf("%d Settles of fresh fingerprints returned fresh=false (store errors?)", n)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "settles/s")
			})
		}
	}
}

func backendName(batched bool) string {
	if batched {
		return "postgres-batched"
	}
	return "postgres"
}

// openBench opens a store on a fresh table: the single-statement one on a
// pool of conc connections (or -pgconns), the batched one on the default
// pool with -pgworkers batch workers.
func openBench(b *testing.B, url string, batched bool, conc int) *postgres.Store {
	b.Helper()
	opts := postgres.Options{Table: newTable(), Batch: batched, BatchWorkers: *benchWorkers}
	if !batched {
		opts.Config = func(c *pgxpool.Config) { c.MaxConns = int32(cmp.Or(*benchConns, conc)) }
	}
	s, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
