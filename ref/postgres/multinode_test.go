package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/nodetest"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
)

// creditsTable is the effect the test sinks apply: one row per credit and
// deliberately no unique constraint, so a double credit shows as two rows.
const creditsTable = `CREATE TABLE IF NOT EXISTS credits (key bytea NOT NULL, payload bytea NOT NULL)`

func applyCredit(ctx context.Context, tx pgx.Tx, key ref.Key, payload []byte) error {
	kb := key.Bytes()
	_, err := tx.Exec(ctx, `INSERT INTO credits (key, payload) VALUES ($1, $2)`, kb[:], payload)
	return err
}

func readCredits(pool *pgxpool.Pool) func(ctx context.Context) ([]nodetest.Grant, error) {
	return func(ctx context.Context) ([]nodetest.Grant, error) {
		rows, err := pool.Query(ctx, `SELECT key, payload FROM credits`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []nodetest.Grant
		for rows.Next() {
			var k, p []byte
			if err := rows.Scan(&k, &p); err != nil {
				return nil, err
			}
			out = append(out, nodetest.Grant{Key: ref.KeyFromBytes([16]byte(k)), Payload: p})
		}
		return out, rows.Err()
	}
}

// TestMultiNodeExactlyOnce: three settler nodes, each with its own Window
// and its own pool, share one database; duplicates are routed across them
// and some arrive at once. Half way through, node 0's network is cut: its
// in-flight claims stay Granted, the sender retries on the other nodes, and
// Recover completes the rest. Every settlement must be credited once.
func TestMultiNodeExactlyOnce(t *testing.T) {
	for _, batched := range []bool{false, true} {
		name := "single"
		if batched {
			name = "batched"
		}
		t.Run(name, func(t *testing.T) {
			url := testserver.Postgres(t)
			const nodes = 3
			var (
				settlers []*ref.Settler
				stores   []*postgres.Store
				cut0     = &testserver.Cutter{}
			)
			for i := range nodes {
				opts := postgres.Options{Batch: batched}
				if i == 0 {
					opts.Config = func(c *pgxpool.Config) { c.ConnConfig.DialFunc = cut0.DialContext }
				}
				s, err := postgres.Open(t.Context(), url, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				if _, err := s.Pool().Exec(t.Context(), creditsTable); err != nil {
					t.Fatal(err)
				}
				stores = append(stores, s)
				settlers = append(settlers, ref.NewSettler(ref.NewWindow(time.Minute, 8), s,
					ref.WithSink(s.Sink(applyCredit)), ref.WithLease(time.Second)))
			}
			nodetest.Run(t, nodetest.Config{
				Nodes: settlers, Settlements: 200, Copies: 4, Goroutines: 16, Seed: 1,
				Fault:  cut0.Cut,
				Ledger: readCredits(stores[1].Pool()),
			})
		})
	}
}
