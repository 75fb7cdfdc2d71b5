package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/onceproof/onceproof/ref/loot"
)

// claimed is what Claim answers.
type claimed struct {
	c       loot.Claim
	created bool
}

// Claim implements loot.Store: the claim statement (an INSERT ... SELECT
// ... ON DUPLICATE KEY UPDATE judging status, deadline and membership under
// a shared lock on the session row), then the claim read back, in one
// transaction. Rows affected: 1 inserted, 2 a duplicate (changed intent or
// retry: requests always moves), 0 refused; a refusal reads the session to
// name its reason (CheckClaim).
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if !in.Valid() {
		return loot.Claim{}, false, wrap("claim", fmt.Errorf("intent %q: %w", in, loot.ErrBadArgument))
	}
	r, err := inTx(ctx, s, func(tx *sql.Tx) (claimed, error) {
		res, err := tx.ExecContext(ctx, s.q.claim, in, in.Priority(), int64(p), no)
		if err != nil {
			return claimed{}, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return claimed{}, err
		}
		if n == 0 {
			sess, now, err := readSession(ctx, tx, s.q.readSessionLocked, no)
			if err != nil {
				return claimed{}, err
			}
			err = loot.CheckClaim(sess, p, now)
			return claimed{}, refusal(err == nil, err)
		}
		c := loot.Claim{Session: no, Player: p}
		err = tx.QueryRowContext(ctx, s.q.readClaim, no, int64(p)).Scan(&c.Intent, &c.At)
		if errors.Is(err, sql.ErrNoRows) {
			err = fmt.Errorf("claim of %d in %q written but not found", p, no)
		}
		return claimed{c, n == 1}, err
	})
	return r.c, r.created, wrap(fmt.Sprintf("claim %s by %d", no, p), err)
}
