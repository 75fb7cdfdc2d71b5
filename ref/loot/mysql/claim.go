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

// Claim implements loot.Store in one round trip (oneTrip) and one
// statement sent: the CALL of Schema's loot_claim_v1, in autocommit (no
// transaction: the claim's locks end with its write). The routine runs
// the claim statement (an INSERT ... SELECT ... ON DUPLICATE KEY UPDATE
// judging status, deadline and membership under a shared lock on the
// session row: the guard is in the write), returning the claim row as it
// wrote it; requests is 1 on an insert and moves on every duplicate
// (changed intent or retry), so it tells a first claim from a repeat.
// Only when the write wrote nothing does it read what names the refusal
// (CheckClaim) from the session.
//
// Why a routine: every statement a client sends costs the server a parse
// and a plan, about as much as the claim itself (Schema's routines are
// parsed once per connection); a routine sends one and keeps the refusal's
// read off the wire. Measured in BenchmarkLootOneConn.
//
// That read is later than the refusal and no lock holds the session
// between them: when the session moved on from what refused the claim
// (OPEN to CLAIMING, errRaced from judge), the claim is sent again as
// queries.claimTx, whose transaction reads what its write left under the
// write's locks: a second round trip, only when a concurrent write came
// between the two statements.
//
// Under Options.Batch, concurrent claims are coalesced into one CALL per
// batch (claimBatch says how), each answered as it would be here.
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	op := fmt.Sprintf("claim %s by %d", no, p)
	if !in.Valid() {
		return loot.Claim{}, false, wrap("claim", fmt.Errorf("intent %q: %w", in, loot.ErrBadArgument))
	}
	c, err := s.batch.claim.claim(ctx, s, claimReq{no: no, p: p, in: in})
	return c.c, c.created, wrap(op, err)
}

// claimReq is one claim: of session no by p, with intent in (valid).
type claimReq struct {
	no string
	p  loot.PlayerID
	in loot.Intent
}

// claimOne is Claim on its own, not coalesced: the CALL, and claimTx
// after it when the session moved on between its write and its read.
func (s *Store) claimOne(ctx context.Context, q claimReq) (claimed, error) {
	r, err := oneTrip(ctx, s, s.q.claimCall, []any{q.no, int64(q.p), q.in, q.in.Priority()}, scanClaimAnswer)
	if err != nil {
		return claimed{}, err
	}
	c, err := r.judge(q.no, q.p)
	if errors.Is(err, errRaced) {
		if r, err = oneTrip(ctx, s, s.q.claimTx, []any{q.in, q.in.Priority(), int64(q.p), q.no, int64(q.p), int64(q.p), q.no}, scanClaimRow); err != nil {
			return claimed{}, err
		}
		c, err = r.judge(q.no, q.p)
	}
	return c, err
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

// scanClaimAnswer reads loot_claim_v1's result sets: the claim row
// RETURNING gave (n from its requests: 1 inserted, 2 a duplicate), or
// else, in the next set, the session that refused it (n 0); neither when
// there is no session.
func scanClaimAnswer(rows *sql.Rows) (r claimRow, err error) {
	for rows.Next() {
		var requests int64
		if err := rows.Scan(&r.intent, &r.at, &requests); err != nil {
			return claimRow{}, err
		}
		r.found, r.n = true, min(requests, 2)
	}
	if err := rows.Err(); err != nil || r.found {
		return r, err
	}
	if err := nextSet(rows); err != nil {
		return claimRow{}, err
	}
	for rows.Next() {
		r.found, r.n = true, 0
		if err := rows.Scan(&r.status, &r.deadline, &r.fence, &r.member, &r.now); err != nil {
			return claimRow{}, err
		}
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
