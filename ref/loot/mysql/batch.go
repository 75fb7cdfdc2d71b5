package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/onceproof/onceproof/ref/loot"
)

// Service.Settle delivers a settle's grants in one call to an inventory
// that has DeliverBatch.
var _ loot.BatchInventory = (*Inventory)(nil)

// DeliverBatch is Deliver for every grant in gs, in one round trip
// (oneTrip) and one transaction, all or nothing: the recorded grants among
// gs's distinct numbers counted under FOR UPDATE (their rows locked in the
// order Deliver's UPDATE takes them, unique key then clustered row), and
// only when all are recorded, their UPDATE to SUCCESS and their ledger
// rows copied from the recorded grants (never from gs), a grant delivered
// before changing nothing. A number that was never recorded is
// loot.ErrNotFound, and nothing of the batch is applied. An empty gs is no
// round trip.
func (inv *Inventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	op := fmt.Sprintf("deliver %d grants", len(gs))
	if err := loot.CheckContext(ctx); err != nil {
		return wrap(op, err)
	}
	nos := make([]any, 0, len(gs))
	for _, no := range loot.DistinctNos(gs) {
		nos = append(nos, no)
	}
	if len(nos) == 0 {
		return nil
	}
	s := inv.s
	in := "(" + placeholders(len(nos), "?") + ")"
	query := `START TRANSACTION; SELECT COUNT(*) INTO @loot_found FROM loot_grant WHERE grant_no IN ` + in + ` FOR UPDATE; ` +
		`UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no IN ` + in + ` AND status = 'PENDING' AND @loot_found = ?; ` +
		s.q.deliverBatchLedger + in + ` AND @loot_found = ? ON DUPLICATE KEY UPDATE loot_inventory.id = loot_inventory.id; ` +
		`SELECT @loot_found; COMMIT`
	args := make([]any, 0, 3*len(nos)+2)
	args = append(append(append(append(append(args, nos...), nos...), len(nos)), nos...), len(nos))
	found, err := oneTrip(ctx, s, query, args, func(rows *sql.Rows) (n int64, err error) {
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return 0, err
			}
		}
		return n, rows.Err()
	})
	if err == nil && found != int64(len(nos)) {
		err = fmt.Errorf("%d of %d grant numbers never recorded, none delivered: %w", int64(len(nos))-found, len(nos), loot.ErrNotFound)
	}
	return wrap(op, err)
}

// Service.Settle marks a delivered batch in one call to a store that has
// MarkDeliveredBatch.
var _ loot.BatchMarker = (*Store)(nil)

// MarkDeliveredBatch is MarkDelivered for every grant number in nos, in
// one round trip (oneTrip): one UPDATE (PENDING -> SUCCESS) of them all
// and their rows read back, as MarkDelivered's, returned in the order of
// nos (a number repeated is returned at each place). A number not recorded
// is loot.ErrNotFound; the recorded ones are marked all the same, which
// only repeats what the Inventory made true.
func (s *Store) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	op := fmt.Sprintf("mark delivered %d grants", len(nos))
	if err := loot.CheckContext(ctx); err != nil {
		return nil, wrap(op, err)
	}
	if len(nos) == 0 {
		return []loot.Grant{}, nil
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
