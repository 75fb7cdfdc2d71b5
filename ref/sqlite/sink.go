package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/onceproof/onceproof/ref"
)

// Effect applies a grant's business effect (credit the player's balance)
// inside the transaction that records the grant key. It runs only the first
// time a key is delivered; if it returns an error the transaction rolls back
// (no credit, no grant key) and Deliver returns the error. It must use tx,
// not another handle on the database, or the credit escapes the atomicity
// (and, with one connection per handle, waits on the lock tx holds).
type Effect func(ctx context.Context, tx *sql.Tx, key ref.Key, payload []byte) error

// Sink is a ref.Sink whose ledger is the table onceproof_grants (UNIQUE
// grant key, payload, application order) in a SQLite file. Deliver runs in
// one IMMEDIATE transaction: insert the grant key if absent, and only if it
// was absent run the Effect; both commit together or neither does, so a
// kill -9 at any instant leaves either the credit with its key or nothing.
// Safe for concurrent use.
type Sink struct {
	h      *handle
	closed atomic.Bool // this Sink's own Close (the handle may be the Store's)
	owned  bool        // Close closes h (OpenSink) or not (Store.Sink)
	effect Effect
	// commitRecord: Deliver also advances the store's record to Delivered
	// in the same transaction (Store.Sink).
	commitRecord bool
}

var _ ref.CommittingSink = (*Sink)(nil)

// OpenSink opens (creating if needed) the ledger in the database file at
// path, on its own handle. effect may be nil (the ledger alone is the
// effect). The file may be the one a Store uses or another.
func OpenSink(path string, effect Effect) (*Sink, error) {
	h, err := openHandle(path)
	if err != nil {
		return nil, err
	}
	return &Sink{h: h, owned: true, effect: effect}, nil
}

// Sink returns a Sink on the store's own database whose Deliver also moves
// the key's record to StateDelivered in the same transaction as the credit.
// A crash between Deliver and the Settler's Commit then leaves nothing to
// recover (the Commit that follows is a no-op). The Settler's protocol does
// not depend on it: with OpenSink the record stays Granted until Commit and
// Recover completes it through the ledger's grant key instead. The sink
// shares the store's handle: closing the store closes it.
func (s *Store) Sink(effect Effect) *Sink {
	return &Sink{h: s.h, effect: effect, commitRecord: true}
}

// CommitsRecord implements ref.CommittingSink: true for a sink from
// Store.Sink, whose Deliver moves the record to Delivered in the
// transaction of the credit (a Settler on that Store then skips its
// Commit); false for one from OpenSink, which never touches the records.
func (k *Sink) CommitsRecord() bool { return k.commitRecord }

// Close makes every later call on this Sink return ref.ErrClosed. A sink
// from OpenSink also closes its handle; one from Store.Sink leaves the
// store's handle open (closing the Store closes both).
func (k *Sink) Close() error {
	if k.closed.Swap(true) || !k.owned {
		return nil
	}
	return k.h.close()
}

// check is handle.check plus this Sink's own closed flag.
func (k *Sink) check(ctx context.Context, op string) error {
	if k.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w", op, ref.ErrClosed)
	}
	return k.h.check(ctx, op)
}

// Deliver implements ref.Sink.
func (k *Sink) Deliver(ctx context.Context, key ref.Key, payload []byte) (err error) {
	if err := k.check(ctx, "deliver"); err != nil {
		return err
	}
	op := fmt.Sprintf("deliver %v", key)
	tx, err := k.h.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): no lock upgrade to deadlock on
	if err != nil {
		return k.h.wrap(op+": begin", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if payload == nil {
		payload = []byte{}
	}
	kb := key.Bytes()
	res, err := tx.ExecContext(ctx,
		`INSERT INTO onceproof_grants (key, payload) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
		kb[:], payload)
	if err != nil {
		return k.h.wrap(op+": record grant key", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return k.h.wrap(op+": rows affected", err)
	}
	if n == 1 && k.effect != nil {
		if err := k.effect(ctx, tx, key, payload); err != nil {
			return fmt.Errorf("sqlite: %s: effect: %w", op, err)
		}
	}
	if k.commitRecord {
		if _, err := tx.ExecContext(ctx,
			`UPDATE onceproof_records SET state = 2, payload = NULL WHERE key = ? AND state < 2`, kb[:]); err != nil {
			return k.h.wrap(op+": commit record", err)
		}
	}
	if err := tx.Commit(); err != nil {
		// "Outcome unknown" in ref's sense: a failed COMMIT may still have
		// reached the file; the retry's Deliver finds the key or applies it.
		return k.h.wrap(op+": commit", err)
	}
	return nil
}

// Grant is one applied grant in the ledger.
type Grant struct {
	// Seq is the grant's position in application order, from 1.
	Seq     int64
	Key     ref.Key
	Payload []byte
}

// Grants returns the whole ledger in application order. It is meant for
// audits and tests (it reads every row).
func (k *Sink) Grants(ctx context.Context) ([]Grant, error) {
	if err := k.check(ctx, "grants"); err != nil {
		return nil, err
	}
	rows, err := k.h.db.QueryContext(ctx, `SELECT seq, key, payload FROM onceproof_grants ORDER BY seq`)
	if err != nil {
		return nil, k.h.wrap("grants", err)
	}
	defer rows.Close()
	var out []Grant
	for rows.Next() {
		var (
			g  Grant
			kb []byte
		)
		if err := rows.Scan(&g.Seq, &kb, &g.Payload); err != nil {
			return nil, k.h.wrap("grants: scan", err)
		}
		if len(kb) != 16 {
			return nil, fmt.Errorf("sqlite: grants: key of %d bytes in the ledger, want 16", len(kb))
		}
		g.Key = ref.KeyFromBytes([16]byte(kb))
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, k.h.wrap("grants: rows", err)
	}
	return out, nil
}

// Applied reports whether key's grant is in the ledger, and its payload.
func (k *Sink) Applied(ctx context.Context, key ref.Key) ([]byte, bool, error) {
	if err := k.check(ctx, "applied"); err != nil {
		return nil, false, err
	}
	kb := key.Bytes()
	var p []byte
	err := k.h.db.QueryRowContext(ctx, `SELECT payload FROM onceproof_grants WHERE key = ?`, kb[:]).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, k.h.wrap(fmt.Sprintf("applied %v", key), err)
	}
	return p, true, nil
}
