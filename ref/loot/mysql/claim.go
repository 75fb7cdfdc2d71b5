package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// claimed is what Claim answers.
type claimed struct {
	c       loot.Claim
	created bool
}

// Claim implements loot.Store in one round trip (oneTrip), and sends no
// transaction: queries.claimFast is the claim statement alone (an INSERT
// ... SELECT ... ON DUPLICATE KEY UPDATE judging status, deadline and
// membership under a shared lock on the session row, in autocommit: its
// locks end with it) and the read that answers it, which reads only the
// claim row when the write landed and only the session when it did not
// (claimAnswer). Rows affected: 1 inserted, 2 a duplicate (changed intent
// or retry: requests always moves), 0 refused; a refusal names its reason
// from the same read (CheckClaim).
//
// That read is later than the write, and no lock holds the rows between
// them, so two answers can be of a later state than the write's: the
// session moved on from what refused the claim (OPEN to CLAIMING: errRaced
// from judge), or another claim of the same player changed the intent
// between the write and the read. Either sends the claim again as
// queries.claimTx, whose transaction reads what its write left, under the
// write's locks: a second round trip, only when a concurrent write came
// between the two statements.
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	op := fmt.Sprintf("claim %s by %d", no, p)
	if !in.Valid() {
		return loot.Claim{}, false, wrap("claim", fmt.Errorf("intent %q: %w", in, loot.ErrBadArgument))
	}
	r, err := oneTrip(ctx, s, s.q.claimFast, []any{in, in.Priority(), int64(p), no, no, int64(p), int64(p), no}, scanClaimAnswer)
	if err != nil {
		return loot.Claim{}, false, wrap(op, err)
	}
	c, err := r.judge(no, p)
	if (err == nil && c.c.Intent != in) || errors.Is(err, errRaced) {
		if r, err = oneTrip(ctx, s, s.q.claimTx, []any{in, in.Priority(), int64(p), no, int64(p), int64(p), no}, scanClaimRow); err != nil {
			return loot.Claim{}, false, wrap(op, err)
		}
		c, err = r.judge(no, p)
	}
	return c.c, c.created, wrap(op, err)
}

// judge is Claim's answer from what claimTx read.
func (r claimRow) judge(no string, p loot.PlayerID) (claimed, error) {
	switch {
	case !r.found:
		return claimed{}, fmt.Errorf("session %q: %w", no, loot.ErrNotFound)
	case r.n == 0:
		sess := loot.Session{Spec: loot.Spec{No: no, Deadline: r.deadline}, Status: r.status, Fence: loot.Fence(r.fence)}
		if r.member {
			sess.Members = []loot.PlayerID{p}
		}
		err := loot.CheckClaim(sess, p, r.now)
		return claimed{}, refusal(err == nil, err)
	case !r.intent.Valid:
		return claimed{}, fmt.Errorf("claim of %d in %q written but not found", p, no)
	}
	return claimed{loot.Claim{Session: no, Player: p, Intent: loot.Intent(r.intent.String), At: r.at.Time}, r.n == 1}, nil
}

// claimRow is queries.claimTx's read; found is false when it had no row.
type claimRow struct {
	found         bool
	n, fence      int64
	status        loot.Status
	deadline, now time.Time
	member        bool
	intent        sql.NullString
	at            sql.NullTime
}

// scanClaimAnswer reads claimAnswer's row: the claim's columns when the
// write landed (n > 0), the session's when it did not; none when it did
// not and there is no session.
func scanClaimAnswer(rows *sql.Rows) (r claimRow, err error) {
	for rows.Next() {
		var (
			status sql.NullString
			dl     sql.NullTime
			fence  sql.NullInt64
			member sql.NullBool
		)
		if err := rows.Scan(&r.n, &r.intent, &r.at, &status, &dl, &fence, &member, &r.now); err != nil {
			return claimRow{}, err
		}
		r.found, r.status, r.deadline, r.fence, r.member = true, loot.Status(status.String), dl.Time, fence.Int64, member.Bool
	}
	return r, rows.Err()
}

func scanClaimRow(rows *sql.Rows) (r claimRow, err error) {
	for rows.Next() {
		r.found = true
		if err := rows.Scan(&r.n, &r.status, &r.deadline, &r.fence, &r.member, &r.intent, &r.at, &r.now); err != nil {
			return claimRow{}, err
		}
	}
	return r, rows.Err()
}
