package ref

import (
	"context"
	"fmt"
)

// SeedStore is the seed's Store interface (the Go code of source document
// 000, "Correctness under at-least-once delivery"; see the package doc):
// infallible, keyed by the 64-bit fingerprint, with no payload or lease.
// Stores written against it keep working through FromSeedStore.
type SeedStore interface {
	Begin(key uint64) (st State, created bool)
	Commit(key uint64, st State)
}

// FromSeedStore adapts a seed-style store to Store. What it cannot give:
// records are keyed by Key.Hi (the 64-bit fingerprint: see Fingerprint for
// the collision bound that implies over long retention), nothing is kept for
// Recover (the result is not a PendingStore, so Recover returns
// ErrNoPending), and a seed store cannot fail, so the only errors are a
// cancelled ctx. Commit keeps the Store contract's forward-only rule by
// reading the state first (through Begin, which on an existing key changes
// nothing).
func FromSeedStore(s SeedStore) Store { return seedStore{s} }

type seedStore struct{ s SeedStore }

func (a seedStore) Begin(ctx context.Context, c Claim) (State, bool, error) {
	if err := ctx.Err(); err != nil {
		return StateNew, false, fmt.Errorf("ref: seed store begin: %w", err)
	}
	st, created := a.s.Begin(c.Key.Hi)
	return st, created, nil
}

func (a seedStore) Commit(ctx context.Context, key Key, st State) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ref: seed store commit: %w", err)
	}
	cur, created := a.s.Begin(key.Hi)
	if created {
		// The probe claimed a key nobody had: the Store contract says that
		// is ErrNotFound. The seed interface cannot delete, so the probe's
		// Granted record stays, which blocks the key as a claim would.
		return fmt.Errorf("ref: seed store commit %v: %w", key, ErrNotFound)
	}
	if st > cur {
		a.s.Commit(key.Hi, st)
	}
	return nil
}
