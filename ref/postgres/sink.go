package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref"
)

// Effect applies a grant's business effect (credit the player's balance)
// inside tx, the transaction that records the grant key. It runs at most
// once per key ever: only in the transaction that inserted the key's grant
// row, and that transaction commits the effect, the grant row and the
// claim's Delivered state together. An error rolls all three back and
// Deliver returns it. It must use tx, not the pool, or the credit escapes
// the atomicity. (ref/sqlite's Effect is the same idea on a *sql.Tx.)
type Effect func(ctx context.Context, tx pgx.Tx, key ref.Key, payload []byte) error

// Sink is a ref.Sink in the store's database: a grant table with the key as
// PRIMARY KEY (Table+"_grants") records each applied grant once, and the
// caller's Effect applies the effect in the same transaction. So a credit
// and its record survive a crash together or not at all, and a retry or
// Recover that delivers again finds the grant row and applies nothing.
type Sink struct {
	s      *Store
	effect Effect
}

var _ ref.CommittingSink = (*Sink)(nil)

// Sink returns a Sink writing to this store's database. effect may be nil:
// the grant table (with each grant's payload) is then the ledger itself.
func (s *Store) Sink(effect Effect) *Sink { return &Sink{s: s, effect: effect} }

// Deliver implements ref.Sink. In one transaction it inserts the grant row
// (a no-op if the key was applied before), runs the Effect if the row is
// new, and advances the key's claim to Delivered, so a Settler skips its own
// Commit (CommitsRecord). An error means the transaction did not commit, or
// its commit's outcome is unknown (a connection lost during COMMIT): a retry
// with the same key is safe either way.
func (k *Sink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	s := k.s
	if s.closed.Load() {
		return s.wrap("deliver", ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.wrap("deliver", err)
	}
	if payload == nil {
		payload = []byte{}
	}
	kb := key.Bytes()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q.grant, kb[:], payload)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 && k.effect != nil {
			if err := k.effect(ctx, tx, key, payload); err != nil {
				return fmt.Errorf("effect: %w", err)
			}
		}
		_, err = tx.Exec(ctx, s.q.markDelivered, kb[:])
		return err
	})
	if err != nil {
		return s.wrap(fmt.Sprintf("deliver %v", key), err)
	}
	return nil
}

// CommitsRecord implements ref.CommittingSink: Deliver moves the key's
// claim to Delivered in the transaction of the grant, so a Settler on this
// sink's Store skips its own Commit.
func (k *Sink) CommitsRecord() bool { return true }

// Applied reports whether key's grant was applied, and the payload it was
// applied with.
func (k *Sink) Applied(ctx context.Context, key ref.Key) ([]byte, bool, error) {
	kb := key.Bytes()
	var p []byte
	err := k.s.pool.QueryRow(ctx, k.s.q.grantGet, kb[:]).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, k.s.wrap("applied", err)
	}
	return p, true, nil
}

// Count returns how many grants were applied.
func (k *Sink) Count(ctx context.Context) (int, error) {
	var n int
	if err := k.s.pool.QueryRow(ctx, k.s.q.grantCount).Scan(&n); err != nil {
		return 0, k.s.wrap("count", err)
	}
	return n, nil
}
