package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// MarkDelivered implements loot.Store in one round trip (oneTrip): the
// UPDATE (PENDING -> SUCCESS) and the grant read back. No transaction is
// needed: SUCCESS is final, so the read sees what the UPDATE left, or what
// an earlier one did.
func (s *Store) MarkDelivered(ctx context.Context, grantNo string) (loot.Grant, error) {
	g, err := oneTrip(ctx, s, s.q.markDelivered+"; "+s.q.readGrant, []any{grantNo, grantNo}, func(rows *sql.Rows) (g nullGrant, err error) {
		for rows.Next() {
			if err := rows.Scan(g.dest()...); err != nil {
				return nullGrant{}, err
			}
		}
		return g, rows.Err()
	})
	if err == nil && !g.no.Valid {
		err = fmt.Errorf("grant %q: %w", grantNo, loot.ErrNotFound)
	}
	if err != nil {
		return loot.Grant{}, wrap("mark delivered "+grantNo, err)
	}
	return g.grant(), nil
}

// leaseTx is LeaseGrants' transaction: READ COMMITTED whatever the
// server's level (queries.go's leaseSelect says why: no gap lock that
// would stall every settle's grants while the transaction is open). The
// driver sets the level with a statement of its own before START
// TRANSACTION: one round trip more a LeaseGrants, the compensator's, off
// the settle's path.
var leaseTx = &sql.TxOptions{Isolation: sql.LevelReadCommitted}

// LeaseGrants implements loot.Store, in one transaction: the store's now
// (read once), the due grants under FOR UPDATE SKIP LOCKED, oldest lease
// first, their new attempt and lease in one UPDATE by primary key, and the
// rows read back.
func (s *Store) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	if b.Base <= 0 || b.Max < b.Base || limit < 0 {
		return nil, wrap("lease grants", fmt.Errorf("limit %d, backoff %v..%v: %w", limit, b.Base, b.Max, loot.ErrBadArgument))
	}
	if limit == 0 {
		return []loot.Grant{}, nil
	}
	gs, err := inTxAt(ctx, s, leaseTx, func(tx *sql.Tx) ([]loot.Grant, error) {
		var now time.Time
		if err := tx.QueryRowContext(ctx, s.q.now).Scan(&now); err != nil {
			return nil, err
		}
		rows, err := tx.QueryContext(ctx, s.q.leaseSelect, now, limit)
		if err != nil {
			return nil, err
		}
		var ids []any
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return []loot.Grant{}, nil
		}
		in := "(" + placeholders(len(ids), "?") + ")"
		args := append([]any{now, int64(b.Base), int64(b.Max)}, ids...)
		if _, err := tx.ExecContext(ctx, s.q.leaseUpdate+in, args...); err != nil {
			return nil, err
		}
		rows, err = tx.QueryContext(ctx, s.q.leaseRead+in, ids...)
		if err != nil {
			return nil, err
		}
		byID := map[int64]loot.Grant{}
		for rows.Next() {
			var (
				id int64
				g  nullGrant
			)
			if err := rows.Scan(append([]any{&id}, g.dest()...)...); err != nil {
				rows.Close()
				return nil, err
			}
			byID[id] = g.grant()
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
		out := make([]loot.Grant, len(ids)) // in the order they were due
		for i, id := range ids {
			out[i] = byID[id.(int64)]
		}
		return out, nil
	})
	return gs, wrap("lease grants", err)
}

// Overdue implements loot.Store: one SELECT over the two status indexes.
func (s *Store) Overdue(ctx context.Context, limit int) ([]string, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return nil, wrap("overdue", err)
	}
	limit = max(limit, 0)
	rows, err := s.db.QueryContext(ctx, s.q.overdue, limit, limit, limit)
	if err != nil {
		return nil, wrap("overdue", err)
	}
	out := []string{}
	for rows.Next() {
		var (
			no  string
			due time.Time
		)
		if err := rows.Scan(&no, &due); err != nil {
			rows.Close()
			return nil, wrap("overdue", err)
		}
		out = append(out, no)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, wrap("overdue", err)
	}
	return slices.Clip(out), nil
}
