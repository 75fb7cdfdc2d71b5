package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// Service.Settle delivers a settle's grants in one call to an inventory
// that has DeliverBatch.
var _ loot.BatchInventory = (*Inventory)(nil)

// DeliverBatch is Deliver for every grant in gs, all or nothing: the
// recorded grants among gs's distinct numbers are delivered in one round
// trip (deliverTrip) only when every number is recorded, a grant
// delivered before changing nothing. A number that was never recorded is
// loot.ErrNotFound, and nothing of the batch is applied. An empty gs is no
// round trip. The grants it delivered, read back SUCCESS in the same
// transaction, answer the Store's next MarkDeliveredBatch of them
// (ref/loot/internal/delivered). Under Options.Batch, concurrent calls
// share one round trip (deliverbatch.go), each still all or nothing for
// its own grants.
func (inv *Inventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	op := fmt.Sprintf("deliver %d grants", len(gs))
	if err := loot.CheckContext(ctx); err != nil {
		return wrap(op, err)
	}
	nos := loot.DistinctNos(gs)
	if len(nos) == 0 {
		return nil
	}
	s := inv.s
	var (
		recs []loot.Grant
		err  error
	)
	if b := s.batch.deliver.b; b != nil {
		recs, err = b.Do(ctx, nos, func() ([]loot.Grant, error) { return s.deliverNos(ctx, nos) })
		if errors.Is(err, coalesce.ErrClosed) {
			err = errBatchClosed // as the settles' batchers say it (batchDo)
		}
	} else {
		recs, err = s.deliverNos(ctx, nos)
	}
	if err != nil {
		return wrap(op, err)
	}
	s.delivered.Put(recs)
	return nil
}

// deliverNos is DeliverBatch's one call for the distinct numbers nos: the
// grants as it left them, in the order of nos, or loot.ErrNotFound when
// some number is not recorded (and nothing was applied).
func (s *Store) deliverNos(ctx context.Context, nos []string) ([]loot.Grant, error) {
	found, applied, err := s.deliverTrip(ctx, nos)
	if err != nil {
		return nil, err
	}
	if !applied {
		return nil, notRecorded(len(nos)-len(found), len(nos))
	}
	return pick(found, nos), nil
}

// deliverTrip delivers the grants nos (distinct numbers) in one round trip
// (oneTrip) and one transaction, if every one of them is recorded: the
// recorded ones counted under FOR UPDATE (their rows locked in the order
// Deliver's UPDATE takes them, unique key then clustered row, and in
// grant_no order: the range scan of an IN list reads its values sorted,
// so two trips that share grants wait for each other instead of
// deadlocking), and only when the count is len(nos), their UPDATE to
// SUCCESS and their ledger rows copied from the recorded grants (never
// from the caller). It returns the recorded grants among nos, read back in
// the transaction, under its locks (so exactly what a read would return
// after it), and whether they were delivered: all of nos were recorded.
// A grant never leaves loot_grant, so when applied is false a subset of
// nos whose numbers are all in found would be applied by the next trip.
func (s *Store) deliverTrip(ctx context.Context, nos []string) (found map[string]loot.Grant, applied bool, err error) {
	in := "(" + placeholders(len(nos), "?") + ")"
	query := `START TRANSACTION; SELECT COUNT(*) INTO @loot_found FROM loot_grant WHERE grant_no IN ` + in + ` FOR UPDATE; ` +
		`UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no IN ` + in + ` AND status = 'PENDING' AND @loot_found = ?; ` +
		s.q.deliverBatchLedger + in + ` AND @loot_found = ? ON DUPLICATE KEY UPDATE loot_inventory.id = loot_inventory.id; ` +
		`SELECT @loot_found, ` + grantColumns + ` FROM loot_grant WHERE grant_no IN ` + in + `; COMMIT`
	ns := make([]any, len(nos))
	for i, no := range nos {
		ns[i] = no
	}
	args := make([]any, 0, 4*len(nos)+2) // the four IN lists, two guards
	args = append(append(append(append(append(append(args, ns...), ns...), len(nos)), ns...), len(nos)), ns...)
	type answer struct {
		count int64 // @loot_found: the recorded grants the UPDATE and INSERT were guarded by
		found map[string]loot.Grant
	}
	a, err := oneTrip(ctx, s, query, args, func(rows *sql.Rows) (a answer, err error) {
		a.found = make(map[string]loot.Grant, len(nos))
		for rows.Next() {
			var g nullGrant
			if err := rows.Scan(append([]any{&a.count}, g.dest()...)...); err != nil {
				return answer{}, err
			}
			a.found[g.no.String] = g.grant()
		}
		return a, rows.Err()
	})
	if err != nil {
		return nil, false, err
	}
	return a.found, a.count == int64(len(nos)) && len(a.found) == len(nos), nil
}

// notRecorded is the answer to a call of n grant numbers, missing of
// which were never recorded.
func notRecorded(missing, n int) error {
	return fmt.Errorf("%d of %d grant numbers never recorded, none delivered: %w", missing, n, loot.ErrNotFound)
}

// pick returns the grants nos of found, in the order of nos.
func pick(found map[string]loot.Grant, nos []string) []loot.Grant {
	out := make([]loot.Grant, len(nos))
	for i, no := range nos {
		out[i] = found[no]
	}
	return out
}

// Service.Settle marks a delivered batch in one call to a store that has
// MarkDeliveredBatch.
var _ loot.BatchMarker = (*Store)(nil)

// MarkDeliveredBatch is MarkDelivered for every grant number in nos:
// grants the Store's own Inventory just delivered in a batch are answered
// as its transaction read them back, with no round trip
// (ref/loot/internal/delivered); otherwise one round trip (oneTrip): one
// UPDATE (PENDING -> SUCCESS) of them all and their rows read back, as
// MarkDelivered's, returned in the order of nos (a number repeated is
// returned at each place). A number not recorded is loot.ErrNotFound; the
// recorded ones are marked all the same, which only repeats what the
// Inventory made true.
func (s *Store) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	op := fmt.Sprintf("mark delivered %d grants", len(nos))
	if err := loot.CheckContext(ctx); err != nil {
		return nil, wrap(op, err)
	}
	if len(nos) == 0 {
		return []loot.Grant{}, nil
	}
	if gs, ok := s.delivered.Take(nos); ok {
		return gs, nil // the Inventory's DeliverBatch marked them
	}
	args := make([]any, 0, 2*len(nos))
	for _, no := range nos {
		args = append(args, no)
	}
	args = append(args, args...)
	in := "(" + placeholders(len(nos), "?") + ")"
	query := `UPDATE loot_grant SET status = 'SUCCESS' WHERE status = 'PENDING' AND grant_no IN ` + in + `; ` +
		s.q.readGrants + in
	byNo, err := oneTrip(ctx, s, query, args, func(rows *sql.Rows) (map[string]loot.Grant, error) {
		m := make(map[string]loot.Grant, len(nos))
		for rows.Next() {
			var g nullGrant
			if err := rows.Scan(g.dest()...); err != nil {
				return nil, err
			}
			m[g.no.String] = g.grant()
		}
		return m, rows.Err()
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	out := make([]loot.Grant, len(nos))
	for i, no := range nos {
		g, ok := byNo[no]
		if !ok {
			return nil, wrap(op, fmt.Errorf("grant %q: %w", no, loot.ErrNotFound))
		}
		out[i] = g
	}
	return out, nil
}
