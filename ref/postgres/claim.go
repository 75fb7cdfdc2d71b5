package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/onceproof/onceproof/ref"
)

// Begin implements ref.Store.
func (s *Store) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	return s.claim(ctx, "begin", c, ref.StateGranted)
}

// BeginDelivered implements ref.DeliveredClaimer: the same one INSERT ... ON
// CONFLICT as Begin (batched too), with the row born in StateDelivered and
// an empty payload, so the seed-form Settle is one statement.
func (s *Store) BeginDelivered(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	c.Payload = nil // a Delivered record keeps no payload (see queries.commit1)
	return s.claim(ctx, "begin delivered", c, ref.StateDelivered)
}

func (s *Store) claim(ctx context.Context, name string, c ref.Claim, born ref.State) (ref.State, bool, error) {
	if s.closed.Load() {
		return ref.StateNew, false, s.wrap(name, ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return ref.StateNew, false, s.wrap(name, err)
	}
	if s.batch != nil {
		r, err := s.batch.Do(ctx, op{claim: c, born: born})
		if err != nil {
			return ref.StateNew, false, s.wrap(name, err)
		}
		return r.st, r.created, nil
	}
	st, created, err := s.begin1(ctx, c, born)
	if err != nil {
		return ref.StateNew, false, s.wrap(name, err)
	}
	return st, created, nil
}

func (s *Store) begin1(ctx context.Context, c ref.Claim, born ref.State) (ref.State, bool, error) {
	kb := c.Key.Bytes()
	payload := c.Payload
	if payload == nil {
		payload = []byte{} // NOT NULL column: nil would be sent as NULL
	}
	var (
		st      int16
		created bool
	)
	err := s.pool.QueryRow(ctx, s.q.begin1, kb[:], payload, c.LeaseUntil, int16(born)).Scan(&st, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		// Inserted concurrently after our snapshot (see queries.begin1).
		created = false
		err = s.pool.QueryRow(ctx, s.q.beginAgain, kb[:]).Scan(&st)
		if errors.Is(err, pgx.ErrNoRows) {
			return ref.StateNew, false, fmt.Errorf("key %v neither inserted nor found (rows are never deleted: was the table truncated?)", c.Key)
		}
	}
	if err != nil {
		return ref.StateNew, false, err
	}
	return ref.State(st), created, nil
}

// Commit implements ref.Store.
func (s *Store) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	if s.closed.Load() {
		return s.wrap("commit", ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.wrap("commit", err)
	}
	if s.batch != nil {
		_, err := s.batch.Do(ctx, op{commit: true, key: key, st: st})
		if err != nil {
			return s.wrap("commit", err)
		}
		return nil
	}
	kb := key.Bytes()
	var found bool
	if err := s.pool.QueryRow(ctx, s.q.commit1, kb[:], int16(st)).Scan(&found); err != nil {
		return s.wrap("commit", err)
	}
	if !found {
		return fmt.Errorf("postgres: commit %v: %w", key, ref.ErrNotFound)
	}
	return nil
}

// retryDeadlock runs f again when PostgreSQL aborted it as a deadlock victim
// (SQLSTATE 40P01). Each batch is one autocommit statement, so an aborted one
// changed nothing and rerunning it is safe. Sorted keys make deadlocks
// unlikely; three attempts make one that still happens invisible.
func retryDeadlock(f func() error) error {
	var err error
	for range 3 {
		err = f()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "40P01" {
			return err
		}
	}
	return err
}

// Pending implements ref.PendingStore.
func (s *Store) Pending(ctx context.Context, now time.Time, limit int) ([]ref.Record, error) {
	if s.closed.Load() {
		return nil, s.wrap("pending", ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrap("pending", err)
	}
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.q.pending, now, limit)
	if err != nil {
		return nil, s.wrap("pending", err)
	}
	defer rows.Close()
	var out []ref.Record
	for rows.Next() {
		var (
			k       []byte
			payload []byte
			lease   time.Time
		)
		if err := rows.Scan(&k, &payload, &lease); err != nil {
			return nil, s.wrap("pending", err)
		}
		if len(k) != 16 {
			return nil, s.wrap("pending", fmt.Errorf("%w: key of %d bytes", ErrSchema, len(k)))
		}
		out = append(out, ref.Record{Key: ref.KeyFromBytes([16]byte(k)), State: ref.StateGranted, Payload: payload, LeaseUntil: lease.UTC()})
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("pending", err)
	}
	return out, nil
}
