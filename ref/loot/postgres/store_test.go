package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestMain diverts the process tests' children first (proc_test.go), then
// runs the tests with the package's throwaway servers.
func TestMain(m *testing.M) {
	childMain()
	testserver.Main(m)
}

// clockBase is the test clock's origin: sub-microsecond digits that the
// store must truncate, in another zone than UTC.
var clockBase = time.Date(2026, 3, 1, 20, 0, 0, 789, time.FixedZone("UTC+8", 8*3600))

// testClock is the table the TestClock option names.
const testClock = "loot_test_clock"

// clockedDB returns a fresh database whose test clock reads at, and a pool
// on it for the test's own reads and clock moves.
func clockedDB(t testing.TB, at time.Time) (string, *pgxpool.Pool) {
	t.Helper()
	url := testserver.Postgres(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE `+testClock+` (now timestamptz NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO `+testClock+` VALUES ($1)`, at); err != nil {
		t.Fatal(err)
	}
	return url, pool
}

func openStore(t testing.TB, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	return s
}

// effectsTable is where the harness's inventory Effect counts its
// applications: no unique key, so a second application is a second row.
const effectsTable = `CREATE TABLE IF NOT EXISTS test_effects (grant_no text NOT NULL)`

func countEffect(ctx context.Context, tx pgx.Tx, g loot.Grant) error {
	_, err := tx.Exec(ctx, `INSERT INTO test_effects (grant_no) VALUES ($1)`, g.No)
	return err
}

// TestStoreConformance runs loottest on a fresh database per subtest, with
// the store's clock replaced by a one-row table the harness moves, and the
// Store's own Inventory with an Effect that counts its applications in a
// table without a unique key (Applied reads it); with every call its own
// statement, and with Options.Batch.
func TestStoreConformance(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) { runConformance(t, batch) })
	}
}

func runConformance(t *testing.T, batch bool) {
	loottest.Run(t, func(t *testing.T) loottest.Harness {
		url, pool := clockedDB(t, clockBase)
		if _, err := pool.Exec(t.Context(), effectsTable); err != nil {
			t.Fatal(err)
		}
		return loottest.Harness{
			Open: func(t *testing.T) loot.Store {
				return openStore(t, url, postgres.Options{TestClock: testClock, Batch: batch})
			},
			Now: func(t *testing.T) time.Time {
				var now time.Time
				if err := pool.QueryRow(t.Context(), `SELECT now FROM `+testClock).Scan(&now); err != nil {
					t.Fatal(err)
				}
				return now
			},
			Advance: func(t *testing.T, d time.Duration) {
				if _, err := pool.Exec(t.Context(), `UPDATE `+testClock+` SET now = now + $1::interval`, d); err != nil {
					t.Fatal(err)
				}
			},
			Inventory: func(_ *testing.T, s loot.Store) loot.Inventory { return s.(*postgres.Store).Inventory(countEffect) },
			Applied: func(t *testing.T, grantNo string) int {
				var n int
				if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM test_effects WHERE grant_no = $1`, grantNo).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
		}
	})
}
