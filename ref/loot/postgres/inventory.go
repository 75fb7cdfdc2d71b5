package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref/loot"
)

// Effect puts one granted item into the game's own tables, inside the
// transaction that records the delivery (tx): the item, the ledger row
// and the grant's SUCCESS commit together or not at all. It runs at most
// once per grant number; an error rolls the delivery back (the grant stays
// PENDING and compensation delivers it again).
type Effect func(ctx context.Context, tx pgx.Tx, g loot.Grant) error

// Inventory is a loot.Inventory in the Store's database: the ledger
// loot_inventory, keyed by grant_no, is written in the same transaction
// as the grant's PENDING -> SUCCESS, so an item is delivered exactly when
// its grant is SUCCESS, and at most once. Safe for concurrent use.
type Inventory struct {
	s      *Store
	effect Effect
}

var _ loot.BatchInventory = (*Inventory)(nil)

// Inventory returns the inventory kept in s's database. With a nil effect
// the ledger row is the item (Holding counts them) and a delivery is one
// statement, a whole settle's batch too (DeliverBatch); with an Effect, a
// delivery is a transaction of three statements around it.
func (s *Store) Inventory(effect Effect) *Inventory { return &Inventory{s: s, effect: effect} }

// Deliver implements loot.Inventory. It delivers only grants recorded in
// its store, as recorded (loot.ErrNotFound otherwise): it never takes the
// caller's word for a grant.
func (inv *Inventory) Deliver(ctx context.Context, g loot.Grant) error {
	op := "deliver " + g.No
	if err := live(ctx); err != nil {
		return wrap(op, err)
	}
	if inv.effect == nil {
		var n int
		if err := inv.s.pool.QueryRow(ctx, inv.s.q.deliver, g.No).Scan(&n); err != nil {
			return wrap(op, err)
		}
		if n == 0 {
			return fmt.Errorf("loot/postgres: grant %q: %w", g.No, loot.ErrNotFound)
		}
		return nil
	}
	err := pgx.BeginFunc(ctx, inv.s.pool, func(tx pgx.Tx) error {
		var fresh bool
		rec, err := scanGrant(tx.QueryRow(ctx, inv.s.q.deliverLock, g.No), &fresh)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("loot/postgres: grant %q: %w", g.No, loot.ErrNotFound)
		case err != nil || !fresh:
			return err // a ledger row exists: its transaction marked SUCCESS
		}
		if err := inv.effect(ctx, tx, rec); err != nil {
			return fmt.Errorf("effect: %w", err)
		}
		_, err = tx.Exec(ctx, inv.s.q.markDelivered, g.No)
		return err
	})
	if err != nil && !errors.Is(err, loot.ErrNotFound) {
		return wrap(op, err)
	}
	return err
}

// DeliverBatch implements loot.BatchInventory. With a nil effect it is
// one statement for the whole batch, all or none: a grant not recorded in
// its store is loot.ErrNotFound and nothing is applied; the grants it
// returns, SUCCESS, answer the store's next MarkDeliveredBatch of them
// (ref/loot/internal/delivered). With an Effect it
// is Deliver for each grant in turn (a transaction each: the effect's own
// statements are per grant anyway), stopping at the first error.
func (inv *Inventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	op := fmt.Sprintf("deliver %d grants", len(gs))
	if err := live(ctx); err != nil {
		return wrap(op, err)
	}
	if inv.effect != nil {
		for _, g := range gs {
			if err := inv.Deliver(ctx, g); err != nil {
				return err
			}
		}
		return nil
	}
	nos := loot.DistinctNos(gs)
	if len(nos) == 0 {
		return nil
	}
	s := inv.s
	alone := func() ([]loot.Grant, error) {
		recs, err := s.deliverNos(ctx, nos)
		return recs, wrap(op, err)
	}
	var (
		recs []loot.Grant
		err  error
	)
	if s.delivers != nil {
		recs, err = laneDo(ctx, s.delivers, nos, alone) // a batch's answers are wrapped already (runDelivers)
	} else {
		recs, err = alone()
	}
	if err != nil {
		return err
	}
	s.delivered.Put(recs)
	return nil
}

// errNotRecorded is deliverNos' answer when some number is not recorded:
// its statement applied nothing.
var errNotRecorded = fmt.Errorf("some of them not recorded: %w", loot.ErrNotFound)

// deliverNos is DeliverBatch's statement for the distinct numbers nos: the
// grants as it left them, every one of them, or errNotRecorded. Its errors
// are not wrapped.
func (s *Store) deliverNos(ctx context.Context, nos []string) ([]loot.Grant, error) {
	rows, err := s.pool.Query(ctx, s.q.deliverBatch, nos, len(nos))
	if err != nil {
		return nil, err
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (loot.Grant, error) { return scanGrant(row) })
	if err != nil {
		return nil, err
	}
	if len(recs) != len(nos) { // none: the statement applied nothing
		return nil, errNotRecorded
	}
	return recs, nil
}

// Holding returns how many items of loot code lootCode the ledger holds
// for player (the items themselves when the Inventory has no Effect).
func (inv *Inventory) Holding(ctx context.Context, player loot.PlayerID, lootCode string) (int, error) {
	if err := live(ctx); err != nil {
		return 0, wrap("holding", err)
	}
	var n int
	if err := inv.s.pool.QueryRow(ctx, inv.s.q.holding, int64(player), lootCode).Scan(&n); err != nil {
		return 0, wrap("holding", err)
	}
	return n, nil
}
