package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// mysqlBackend is the store of ref/loot/mysql with its same-database
// inventory (loot_inventory), wins counted from that ledger, and the pool
// sized for conns callers; with coalesce, concurrent calls share one
// database call per batch (mysql.Options.Batch).
func mysqlBackend(ctx context.Context, dsn string, conns int, coalesce bool) (*backend, error) {
	st, err := mysql.Open(ctx, dsn, mysql.Options{Batch: coalesce})
	if err != nil {
		return nil, err
	}
	db := st.DB()
	// Every request holds one connection for one transaction; idle ones
	// are kept up to the same number, or a burst reconnects each time.
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return &backend{
		kind: "mysql", store: st, inventory: st.Inventory(),
		fairness: sqlWins{db, "loot_inventory"}, delivered: sqlWins{db, "loot_grant"},
		now: func(ctx context.Context) (time.Time, error) {
			var t time.Time
			err := db.QueryRowContext(ctx, "SELECT NOW(6)").Scan(&t)
			return t, err
		},
		pending: func(ctx context.Context) (int, error) {
			var n int
			// idx_status_lease (status, lease_until) covers it.
			err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM loot_grant WHERE status = 'PENDING'").Scan(&n)
			return n, err
		},
		ping:  db.PingContext,
		close: st.Close,
	}, nil
}

// sqlWins is the FairnessProvider of a MySQL store: a player's Wins is how
// many items of the loot code the inventory ledger (loot_inventory, which
// mysql.Inventory writes) holds for them, or, with -inventory, how many
// SUCCESS grants of it loot_grant holds (backend.delivered). lootd knows
// no other history, so it opens sessions under loot.RuleCount, the rule
// that reads Wins alone.
type sqlWins struct {
	db    *sql.DB
	table string // "loot_inventory" or "loot_grant"
}

// winsWhere is the condition a wins table's rows must meet to count: an
// item in loot_inventory is one, a grant only once delivered.
var winsWhere = map[string]string{"loot_inventory": "", "loot_grant": "status = 'SUCCESS' AND "}

func (w sqlWins) Fairness(ctx context.Context, lootCode string, players []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	if len(players) == 0 {
		return map[loot.PlayerID]loot.Fairness{}, nil
	}
	args := []any{lootCode}
	for _, p := range players {
		args = append(args, int64(p))
	}
	// idx_player_loot (player_id, loot_code) serves loot_inventory's.
	q := "SELECT player_id, COUNT(*) FROM " + w.table + " WHERE " + winsWhere[w.table] + "loot_code = ? AND player_id IN (" +
		strings.TrimSuffix(strings.Repeat("?,", len(players)), ",") + ") GROUP BY player_id"
	rows, err := w.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("wins: %w", err)
	}
	defer rows.Close()
	return winsFrom(players, rows)
}

// winsFrom reads (player_id, wins) rows into the answer of a
// FairnessProvider: every one of players, 0 wins where no row says more.
func winsFrom(players []loot.PlayerID, rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}) (map[loot.PlayerID]loot.Fairness, error) {
	out := make(map[loot.PlayerID]loot.Fairness, len(players))
	for _, p := range players {
		out[p] = loot.Fairness{}
	}
	for rows.Next() {
		var p, wins int64
		if err := rows.Scan(&p, &wins); err != nil {
			return nil, fmt.Errorf("wins: %w", err)
		}
		out[loot.PlayerID(p)] = loot.Fairness{Wins: wins}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("wins: %w", err)
	}
	return out, nil
}
