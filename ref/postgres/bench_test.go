package postgres_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/benchkit"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
	"github.com/onceproof/onceproof/ref/storetest"
)

// benchConns overrides the pool size of the single-statement store (default:
// one connection per caller). On the 2-core test machine 16 connections
// served 64 callers about as well as 64 did (BenchmarkStore 9.0-9.6k pairs/s
// against 9.2-9.6k, BenchmarkSettle 19-20k settles/s against 18-19k; an
// earlier session measured 10.4k against 7.6k): compare against it too
// before quoting a ratio.
var benchConns = flag.Int("pgconns", 0, "pool size of backend=postgres in BenchmarkStore (0: one per caller)")

// benchWorkers overrides Options.BatchWorkers of backend=postgres-batched, to
// compare before changing the default.
var benchWorkers = flag.Int("pgworkers", 0, "Options.BatchWorkers of backend=postgres-batched (0: the default)")

// benchConcs are the concurrency levels: one caller, a busy node, and a
// burst (64, where the target is batching at 5x one statement per claim).
var benchConcs = []int{1, 16, 64}

// BenchmarkStore measures one claim + commit (Begin of a fresh key, then
// Commit(Delivered)), the store's share of a settlement in the two-step form,
// with C callers at once. backend=postgres runs one statement per call on a
// pool of C connections (or -pgconns); backend=postgres-batched coalesces
// concurrent calls (internal/coalesce): each batch is one round trip and one
// implicit transaction, one multi-row INSERT ... ON CONFLICT for its claims
// and one multi-row UPDATE for its commits.
//
// The target: batched at least 5x one statement per claim at C=64.
// Measured on the 2-core test machine, conc=64, -benchtime=20000x -count=3,
// with other test runs sharing it (load average 2-10 during the runs):
// before this session's changes single 9.9-10.7k pairs/s, batched
// 35.0-36.4k (3.3-3.7x); after, single 9.2-9.6k, batched 35.3-37.7k
// (3.7-4.1x; 3.6-4.1x against -pgconns=16). NOT the 5x target. Where the
// time goes: the Commit of a Granted row cannot be a HOT update because of
// the pending index (see queries.schema: 40-46k pairs/s without it), a
// batch of 64 callers settles into two alternating halves of ~32 ops, and
// with one batch worker the backend and the Go side take turns (each ~50-70%
// of a core, the rest idle); a second worker helps on an idle host and hurts
// on a busy one (see Options.BatchWorkers). The Settler's own paths need
// fewer writes than this two-step form: see BenchmarkSettle.
//
// The pending index's price (see the comment on it in queries.go), measured
// the same way in one session, batched: without the index 40-46k pairs/s,
// with it 32-35k; the same partial index on (key) instead of (lease), to
// spread inserts over the index, 25-33k against 28-35k (within noise).
//
//	go test -run '^$' -bench 'BenchmarkStore//conc=64' -benchtime=20000x -count=3 ./ref/postgres
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
// Measured like BenchmarkStore (same session, conc=64, -benchtime=20000x
// -count=3, load average ~10 from other test runs): single 18.0-18.8k
// settles/s, batched 77-85k (4.1-4.7x); against -pgconns=16, single
// 19.2-20.3k, batched 72.5-76.5k (3.6-3.9x). Closer to the 5x target than
// claim+commit, still short of it on this machine.
//
// Options.BatchWorkers, compared with -pgworkers on the 2-core test
// machine at conc=64 in one session, batched: with load average 3-4.5,
// BenchmarkStore made 26-32k claim+commit pairs/s with one worker and
// 29-35k with two, BenchmarkSettle 62-84k settles/s with one and 78-88k
// with two; with load average ~12 (other test runs), BenchmarkStore 30-34k
// with one and 16-28k with two, BenchmarkSettle 59-81k and 52-66k. One
// worker loses a little on an idle database host and much less than two
// lose on a busy one, hence the default of 1.
func BenchmarkSettle(b *testing.B) {
	url := testserver.Postgres(b)
	for _, batched := range []bool{false, true} {
		for _, conc := range benchConcs {
			b.Run(fmt.Sprintf("backend=%s/conc=%d", backendName(batched), conc), func(b *testing.B) {
				st := ref.NewSettler(ref.NewWindow(time.Minute, 64), openBench(b, url, batched, conc))
				nonce := uint64(time.Now().UnixNano()) // fresh keys on every run against one database
				now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				rate := benchkit.Parallel(b, conc, func(i int64) error {
					if _, fresh := st.Settle(ref.FingerprintOf(0x5e77, nonce, uint64(i)), now); !fresh {
						return fmt.Errorf("Settle of a fresh fingerprint returned fresh=false (store errors?)")
					}
					return nil
				})
				b.ReportMetric(rate, "settles/s")
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
