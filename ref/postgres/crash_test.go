package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
	"github.com/onceproof/onceproof/ref/storetest"
)

// The kill -9 tests (storetest.RunCrash): a child process settles against
// PostgreSQL and is killed with SIGKILL at each fault point and at seeded
// random moments; the server aborts its open transactions, the parent
// recovers through a new store, re-sends what was not acked, and checks
// every credit landed exactly once. The child gets the database URL from
// the environment and starts no server of its own.

// TestMain diverts crash children first, then runs the tests with the
// package's throwaway server.
func TestMain(m *testing.M) {
	storetest.CrashChild(crashTargets)
	testserver.Main(m)
}

func TestCrashKillNine(t *testing.T) { storetest.RunCrash(t, crashTargets) }

var crashTargets = map[string]storetest.CrashTarget{
	"single":  crashTarget(false),
	"batched": crashTarget(true),
}

// crashEffects counts each key's credits in the sink's transaction: a
// double credit shows as 2.
const crashEffects = `CREATE TABLE IF NOT EXISTS crash_effects (key bytea PRIMARY KEY, n int NOT NULL)`

func crashEffect(ctx context.Context, tx pgx.Tx, key ref.Key, _ []byte) error {
	kb := key.Bytes()
	_, err := tx.Exec(ctx, `INSERT INTO crash_effects (key, n) VALUES ($1, 1)
		ON CONFLICT (key) DO UPDATE SET n = crash_effects.n + 1`, kb[:])
	return err
}

// crashAudit holds the parent's own pool per database: the ledger is read
// directly, not through the handles the child or the recovery used.
var crashAudit sync.Map // url -> *pgxpool.Pool

func crashTarget(batch bool) storetest.CrashTarget {
	return storetest.CrashTarget{
		NewData: func(t *testing.T) string {
			url := testserver.Postgres(t)
			s, err := postgres.Open(t.Context(), url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close() // creates the schema; the audit pool needs the tables
			pool, err := pgxpool.New(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(t.Context(), crashEffects); err != nil {
				t.Fatal(err)
			}
			crashAudit.Store(url, pool)
			t.Cleanup(func() { crashAudit.Delete(url); pool.Close() })
			return url
		},
		Open: func(url string) (ref.PendingStore, ref.Sink, func() error, error) {
			s, err := postgres.Open(context.Background(), url, postgres.Options{Batch: batch})
			if err != nil {
				return nil, nil, nil, err
			}
			return s, s.Sink(crashEffect), s.Close, nil
		},
		Ledger: func(t *testing.T, url string, key ref.Key) storetest.LedgerEntry {
			t.Helper()
			pool := auditPool(t, url)
			kb := key.Bytes()
			var e storetest.LedgerEntry
			err := pool.QueryRow(t.Context(), `SELECT payload FROM `+postgres.DefaultTable+`_grants WHERE key = $1`, kb[:]).Scan(&e.Payload)
			switch {
			case err == nil:
				e.InLedger = true
			case !errors.Is(err, pgx.ErrNoRows):
				t.Fatalf("read grant of %v: %v", key, err)
			}
			err = pool.QueryRow(t.Context(), `SELECT n FROM crash_effects WHERE key = $1`, kb[:]).Scan(&e.Effects)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				t.Fatalf("read effect count of %v: %v", key, err)
			}
			return e
		},
		State: func(t *testing.T, url string, key ref.Key) ref.State {
			t.Helper()
			kb := key.Bytes()
			var st int16
			err := auditPool(t, url).QueryRow(t.Context(), `SELECT state FROM `+postgres.DefaultTable+` WHERE key = $1`, kb[:]).Scan(&st)
			if errors.Is(err, pgx.ErrNoRows) {
				return ref.StateNew
			}
			if err != nil {
				t.Fatalf("read state of %v: %v", key, err)
			}
			return ref.State(st)
		},
		SinkCommitsRecord: true,
	}
}

func auditPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, ok := crashAudit.Load(url)
	if !ok {
		t.Fatalf("no audit pool for %s (NewData did not run in this process)", url)
	}
	return p.(*pgxpool.Pool)
}

// TestSinkConformance runs storetest.RunSink on the transactional Sink,
// counting real applications in crash_effects.
func TestSinkConformance(t *testing.T) {
	url := testserver.Postgres(t)
	storetest.RunSink(t, func(t *testing.T) storetest.SinkHarness {
		table := newTable()
		audit, err := postgres.Open(t.Context(), url, postgres.Options{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { audit.Close() })
		effects := table + "_effects"
		if _, err := audit.Pool().Exec(t.Context(), fmt.Sprintf(`CREATE TABLE %s (key bytea PRIMARY KEY, n int NOT NULL)`, effects)); err != nil {
			t.Fatal(err)
		}
		apply := func(ctx context.Context, tx pgx.Tx, key ref.Key, _ []byte) error {
			kb := key.Bytes()
			_, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s (key, n) VALUES ($1, 1)
				ON CONFLICT (key) DO UPDATE SET n = %[1]s.n + 1`, effects), kb[:])
			return err
		}
		var (
			mu      sync.Mutex
			cutters = map[ref.Sink]*testserver.Cutter{}
		)
		return storetest.SinkHarness{
			Open: func(t *testing.T) ref.Sink {
				c := &testserver.Cutter{}
				s, err := postgres.Open(t.Context(), url, postgres.Options{Table: table, Config: func(cfg *pgxpool.Config) {
					cfg.ConnConfig.DialFunc = c.DialContext
					cfg.ShouldPing = nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				k := s.Sink(apply)
				mu.Lock()
				cutters[k] = c
				mu.Unlock()
				return k
			},
			Applied: func(t *testing.T, key ref.Key) ([]byte, int) {
				t.Helper()
				p, _, err := audit.Sink(nil).Applied(t.Context(), key)
				if err != nil {
					t.Fatal(err)
				}
				kb := key.Bytes()
				var n int
				err = audit.Pool().QueryRow(t.Context(), fmt.Sprintf(`SELECT n FROM %s WHERE key = $1`, effects), kb[:]).Scan(&n)
				if err != nil && !errors.Is(err, pgx.ErrNoRows) {
					t.Fatal(err)
				}
				return p, n
			},
			Break: func(t *testing.T, k ref.Sink) {
				mu.Lock()
				defer mu.Unlock()
				cutters[k].Cut()
			},
		}
	})
}
