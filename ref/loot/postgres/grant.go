package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref/loot"
)

// MarkDelivered implements loot.Store: one statement, the conditional
// UPDATE PENDING -> SUCCESS and, when it matched nothing, the grant as it
// is.
func (s *Store) MarkDelivered(ctx context.Context, grantNo string) (loot.Grant, error) {
	op := "mark delivered " + grantNo
	return retry(ctx, op, func() (loot.Grant, error) {
		g, err := scanGrant(s.pool.QueryRow(ctx, s.q.markDelivered, grantNo))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return loot.Grant{}, fmt.Errorf("loot/postgres: grant %q: %w", grantNo, loot.ErrNotFound)
		case err != nil:
			return loot.Grant{}, wrap(op, err)
		case g.Status == loot.GrantSuccess:
			return g, nil
		}
		return loot.Grant{}, errRaced // changed after the statement's snapshot, or recorded since
	})
}

// MarkDeliveredBatch implements loot.BatchMarker: grants the Store's own
// Inventory just delivered in a batch are answered as it left them, with
// no round trip (ref/loot/internal/delivered); otherwise one statement, the
// conditional UPDATE of every PENDING grant of nos and the rest as they
// are. A number not recorded is loot.ErrNotFound, after the recorded ones
// were marked (harmless, as loot.BatchMarker says).
func (s *Store) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	op := fmt.Sprintf("mark delivered %d grants", len(nos))
	if err := live(ctx); err != nil {
		return nil, wrap(op, err)
	}
	if gs, ok := s.delivered.Take(nos); ok {
		return gs, nil // the Inventory's DeliverBatch marked them (ref/loot/internal/delivered)
	}
	return retry(ctx, op, func() ([]loot.Grant, error) {
		rows, err := s.pool.Query(ctx, s.q.markDeliveredBatch, nos)
		if err != nil {
			return nil, wrap(op, err)
		}
		got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (loot.Grant, error) { return scanGrant(row) })
		if err != nil {
			return nil, wrap(op, err)
		}
		byNo := make(map[string]loot.Grant, len(got))
		for _, g := range got {
			byNo[g.No] = g
		}
		out := make([]loot.Grant, len(nos))
		for i, no := range nos {
			g, ok := byNo[no]
			switch {
			case !ok:
				return nil, fmt.Errorf("loot/postgres: grant %q: %w", no, loot.ErrNotFound)
			case g.Status != loot.GrantSuccess:
				return nil, errRaced // changed after the statement's snapshot, or recorded since
			}
			out[i] = g
		}
		return out, nil
	})
}

// maxLeaseSteps bounds the backoff table LeaseGrants sends: Backoff.Lease
// doubles from Base and stops at Max, and a time.Duration doubles at most
// 63 times, so the table reaches Max within 64 steps for any valid policy.
const maxLeaseSteps = 64

// leaseSteps returns b.Lease(1), b.Lease(2), ... up to the first that is
// b.Max: the statement repeats the last step for later attempts.
func leaseSteps(b loot.Backoff) []time.Duration {
	var steps []time.Duration
	for n := 1; n <= maxLeaseSteps; n++ {
		d := b.Lease(n)
		steps = append(steps, d)
		if d >= b.Max {
			break
		}
	}
	return steps
}

// LeaseGrants implements loot.Store: one UPDATE ... FROM (SELECT ... FOR
// UPDATE SKIP LOCKED) ... RETURNING.
func (s *Store) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	if b.Base <= 0 || b.Max < b.Base || limit < 0 {
		return nil, fmt.Errorf("loot/postgres: lease grants: limit %d, backoff %v..%v: %w", limit, b.Base, b.Max, loot.ErrBadArgument)
	}
	if err := live(ctx); err != nil {
		return nil, wrap("lease grants", err)
	}
	if limit == 0 {
		return []loot.Grant{}, nil
	}
	type leased struct {
		g   loot.Grant
		was time.Time
	}
	rows, err := s.pool.Query(ctx, s.q.leaseGrants, limit, leaseSteps(b))
	if err != nil {
		return nil, wrap("lease grants", err)
	}
	ls, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (leased, error) {
		var l leased
		var err error
		l.g, err = scanGrant(row, &l.was)
		return l, err
	})
	if err != nil {
		return nil, wrap("lease grants", err)
	}
	// RETURNING has no order: restore the lease order the SELECT took them in.
	slices.SortFunc(ls, func(a, b leased) int { return cmp.Or(a.was.Compare(b.was), cmp.Compare(a.g.No, b.g.No)) })
	out := make([]loot.Grant, len(ls))
	for i, l := range ls {
		out[i] = l.g
	}
	return out, nil
}

// Overdue implements loot.Store: one SELECT over the two status indexes.
func (s *Store) Overdue(ctx context.Context, limit int) ([]string, error) {
	if err := live(ctx); err != nil {
		return nil, wrap("overdue", err)
	}
	if limit <= 0 {
		return []string{}, nil
	}
	rows, err := s.pool.Query(ctx, s.q.overdue, limit)
	if err != nil {
		return nil, wrap("overdue", err)
	}
	nos, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("overdue", err)
	}
	return nos, nil
}

// Grants implements loot.Reader.
func (s *Store) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	if err := live(ctx); err != nil {
		return nil, wrap("grants of "+no, err)
	}
	rows, err := s.pool.Query(ctx, s.q.grants, no)
	if err != nil {
		return nil, wrap("grants of "+no, err)
	}
	defer rows.Close()
	found := false
	gs := []loot.Grant{}
	for rows.Next() {
		found = true
		var (
			gno, sess, lootCode *string
			player              *int64
			quantity, rank      *int
			attempts            *int
			status              *string
			until               *time.Time
		)
		if err := rows.Scan(&gno, &sess, &player, &lootCode, &quantity, &rank, &status, &attempts, &until); err != nil {
			return nil, wrap("grants of "+no, err)
		}
		if gno == nil {
			continue // the session's row, without grants
		}
		g := loot.Grant{No: *gno, Session: *sess, Player: loot.PlayerID(*player), Loot: *lootCode, Quantity: *quantity,
			Rank: *rank, Status: loot.GrantStatus(*status), Attempts: *attempts, LeaseUntil: utc(*until)}
		gs = append(gs, g)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("grants of "+no, err)
	}
	if !found {
		return nil, fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
	}
	return gs, nil
}
