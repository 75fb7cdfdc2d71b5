package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestNilContextLeavesThePoolUsable: a library caller passing a nil
// context, with and without batching, to the Inventory with and without
// an Effect (the MariaDB store's pool hung after one).
func TestNilContextLeavesThePoolUsable(t *testing.T) {
	const conns = 2
	noop := func(context.Context, pgx.Tx, loot.Grant) error { return nil }
	for _, batch := range []bool{false, true} {
		for _, effect := range []postgres.Effect{nil, noop} {
			t.Run(fmt.Sprintf("batch=%v/effect=%v", batch, effect != nil), func(t *testing.T) {
				st, err := postgres.Open(t.Context(), testserver.Postgres(t), postgres.Options{Batch: batch, Config: func(c *pgxpool.Config) { c.MaxConns = conns }})
				if err != nil {
					t.Fatal(err)
				}
				if loottest.RunNilContext(t, st, st.Inventory(effect), conns+1) {
					st.Close() // not when the pool hangs: Close would too
				}
			})
		}
	}
}
