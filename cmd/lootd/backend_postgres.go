package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// postgresBackend is the store of ref/loot/postgres with its
// same-database inventory (loot_inventory, no Effect: the ledger row is
// the item), wins counted from that ledger, and a pool of conns
// connections (pgxpool's default is the number of CPUs); with coalesce,
// concurrent calls share one database call per batch
// (postgres.Options.Batch).
func postgresBackend(ctx context.Context, url string, conns int, coalesce bool) (*backend, error) {
	st, err := postgres.Open(ctx, url, postgres.Options{Batch: coalesce, Config: func(c *pgxpool.Config) { c.MaxConns = int32(conns) }})
	if err != nil {
		return nil, err
	}
	pool := st.Pool()
	return &backend{
		kind: "postgres", store: st, inventory: st.Inventory(nil),
		fairness: pgWins{pool, "loot_inventory"}, delivered: pgWins{pool, "loot_grant"},
		now: func(ctx context.Context) (time.Time, error) {
			var t time.Time
			err := pool.QueryRow(ctx, "SELECT now()").Scan(&t) // the clock the store's statements read
			return t, err
		},
		pending: func(ctx context.Context) (int, error) {
			var n int
			// The partial index loot_grant_pending holds exactly these rows.
			err := pool.QueryRow(ctx, "SELECT count(*) FROM loot_grant WHERE status = 'PENDING'").Scan(&n)
			return n, err
		},
		ping:  pool.Ping,
		close: st.Close,
	}, nil
}

// pgWins is sqlWins on PostgreSQL: Wins from loot_inventory, which
// loot_inventory_holder (player_id, loot_code) serves, or from
// loot_grant's SUCCESS rows (backend.delivered).
type pgWins struct {
	pool  *pgxpool.Pool
	table string // "loot_inventory" or "loot_grant"
}

func (w pgWins) Fairness(ctx context.Context, lootCode string, players []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	ids := make([]int64, len(players))
	for i, p := range players {
		ids[i] = int64(p)
	}
	rows, err := w.pool.Query(ctx, `SELECT player_id, count(*) FROM `+w.table+`
		WHERE `+winsWhere[w.table]+`loot_code = $1 AND player_id = ANY($2) GROUP BY player_id`, lootCode, ids)
	if err != nil {
		return nil, fmt.Errorf("wins: %w", err)
	}
	defer rows.Close()
	return winsFrom(players, rows)
}
