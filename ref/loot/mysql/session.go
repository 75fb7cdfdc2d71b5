package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Open implements loot.Store: one transaction of the session's INSERT
// (judging the deadline by the database's clock), its members' multi-row
// INSERT, and the read back.
func (s *Store) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return loot.Session{}, false, err
	}
	type opened struct {
		sess    loot.Session
		created bool
	}
	r, err := inTx(ctx, s, func(tx *sql.Tx) (opened, error) {
		res, err := tx.ExecContext(ctx, s.q.openSession, spec.No, spec.Dungeon, spec.Loot, spec.Quantity,
			spec.Rule, spec.Deadline, spec.Deadline)
		if err != nil {
			return opened{}, err
		}
		created, err := oneRow(res)
		if err != nil {
			return opened{}, err
		}
		if created {
			args := make([]any, 0, 2*len(spec.Members))
			for _, p := range spec.Members {
				args = append(args, spec.No, int64(p))
			}
			if _, err := tx.ExecContext(ctx, s.q.openMembers+placeholders(len(spec.Members), "(?, ?)"), args...); err != nil {
				return opened{}, err
			}
		}
		sess, now, err := readSession(ctx, tx, s.q.readSessionLocked, spec.No)
		if errors.Is(err, loot.ErrNotFound) && !created {
			// Not inserted and not there: the deadline was refused.
			if err := tx.QueryRowContext(ctx, s.q.now).Scan(&now); err != nil {
				return opened{}, err
			}
			return opened{}, loot.CheckOpen(spec, now)
		}
		return opened{sess, created}, err
	})
	return r.sess, r.created, wrap("open "+spec.No, err)
}

// oneRow reports whether res affected one row (an INSERT ... ON DUPLICATE
// KEY UPDATE that changed nothing affects none).
func oneRow(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}

// change is one status change, sent as one transaction in one round trip
// (oneTrip): a conditional UPDATE of the session row, its ROW_COUNT()
// kept in @loot_won, the statements of then (each a write that runs only
// when @loot_won = 1), the session row read back under lock with
// @loot_won (readWon), the frozen claims if claims (only when it matched),
// and the COMMIT.
type change struct {
	update string
	args   []any
	// then, if set, are statements (each ending in "; ") guarded by
	// @loot_won = 1, with their arguments.
	then     string
	thenArgs []any
	// claims: read the frozen claims too (BeginSettle).
	claims bool
	// refused judges the session as read back when the UPDATE matched
	// nothing: the guard's error, or nil for a repeat of a change already
	// made (then the session is returned as it is).
	refused func(sess loot.Session, now time.Time) error
}

// errRaced is the answer when a refused UPDATE's row, read back, would
// have been accepted: under READ COMMITTED the row may have moved between
// the two statements. Nothing was written; the call may be repeated.
var errRaced = errors.New("the session changed between the conditional write and its read back; nothing was written, repeat the call")

// changed is what a change's trip read.
type changed struct {
	found  bool
	won    int64 // the UPDATE's ROW_COUNT(): 1 matched, 0 refused
	sess   loot.Session
	now    time.Time
	claims []loot.Claim
}

func (s *Store) change(ctx context.Context, no string, c change) (loot.Session, []loot.Claim, error) {
	query := "START TRANSACTION; " + c.update + "; SET @loot_won = ROW_COUNT(); " + c.then + s.q.readWon
	args := append(append(slices.Clip(c.args), c.thenArgs...), no)
	if c.claims {
		query += "; " + s.q.frozenClaims
		args = append(args, no)
	}
	r, err := oneTrip(ctx, s, query+"; COMMIT", args, func(rows *sql.Rows) (r changed, err error) {
		for rows.Next() {
			r.found = true
			if r.sess, r.now, err = scanSession(rows.Scan, no, &r.won); err != nil {
				return changed{}, err
			}
		}
		if c.claims {
			if err := nextSet(rows); err != nil {
				return changed{}, err
			}
			if r.claims, _, err = scanClaims(rows, no, false); err != nil {
				return changed{}, err
			}
		}
		return r, rows.Err()
	})
	switch {
	case err != nil:
		return loot.Session{}, nil, err
	case !r.found:
		return loot.Session{}, nil, fmt.Errorf("session %q: %w", no, loot.ErrNotFound)
	case r.won == 1:
		return r.sess, r.claims, nil
	}
	return r.sess, nil, c.refused(r.sess, r.now)
}

// StartClaiming implements loot.Store, in one round trip (change).
func (s *Store) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	sess, _, err := s.change(ctx, no, change{
		update: s.q.startClaim, args: []any{no},
		refused: func(sess loot.Session, _ time.Time) error {
			return refusal(loot.CheckStart(sess))
		},
	})
	return sess, wrap("start claiming "+no, err)
}

// Cancel implements loot.Store, in one round trip (change).
func (s *Store) Cancel(ctx context.Context, no string) (loot.Session, error) {
	sess, _, err := s.change(ctx, no, change{
		update: s.q.cancel, args: []any{no},
		refused: func(sess loot.Session, _ time.Time) error {
			return refusal(loot.CheckCancel(sess))
		},
	})
	return sess, wrap("cancel "+no, err)
}

// refusal is the answer of a guard that says (apply, err) about a session
// whose UPDATE matched nothing: err, or nil for a repeat (!apply). apply
// itself cannot be true of a row that refused the write, unless the row
// moved in between (errRaced).
func refusal(apply bool, err error) error {
	if err == nil && apply {
		return errRaced
	}
	return err
}

// BeginSettle implements loot.Store in one round trip (change): the settle
// CAS, the session row read back under its lock, then the frozen claims.
func (s *Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, wrap("begin settle "+no, fmt.Errorf("settle lease %v: %w", lease, loot.ErrBadArgument))
	}
	sess, claims, err := s.change(ctx, no, change{
		update: s.q.beginSettle, args: []any{micros(lease), no},
		claims: true,
		refused: func(sess loot.Session, now time.Time) error {
			if err := loot.CheckSettle(sess, now); err != nil {
				return err
			}
			// Refused by the UPDATE's now, due by the read back's (a
			// later one): not due, or the lease still held, at the
			// UPDATE's instant.
			if sess.Status == loot.StatusSettling {
				return fmt.Errorf("session %q: settler with fence %d holds it until %v: %w", no, sess.Fence, sess.SettleUntil, loot.ErrAlreadySettling)
			}
			return fmt.Errorf("session %q: deadline %v not reached: %w", no, sess.Deadline, loot.ErrNotDue)
		},
	})
	if err != nil {
		return loot.Frozen{}, wrap("begin settle "+no, err)
	}
	return loot.Frozen{Session: sess, Claims: claims}, nil
}

// RecordGrants implements loot.Store in one round trip (change): the
// fenced UPDATE closing the session, then, if it matched, the grants (an
// INSERT each: queries.grantRow says why) and the audit row, and the
// session read back. A malformed
// decision (loot.CheckDecision, or a grant number uk_grant_no holds
// already) is ErrBadArgument and writes nothing; a session the decision
// could not have closed anyway is refused as CheckRecord says, as a
// well-formed decision would be.
func (s *Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	op := fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence)
	then, args, bad := s.decisionWrites(d)
	if bad != nil {
		return s.refuseDecision(ctx, d, bad)
	}
	sess, _, err := s.change(ctx, d.Session, change{
		update: s.q.record, args: []any{len(d.Grants), d.Session, int64(d.Fence)},
		then: then, thenArgs: args,
		refused: func(sess loot.Session, _ time.Time) error {
			return refusal(loot.CheckRecord(sess, d.Fence))
		},
	})
	if isDuplicateOf(err, "uk_grant_no") {
		err = fmt.Errorf("decision for %q: %w: %w", d.Session, loot.ErrBadArgument, err)
	}
	return sess, wrap(op, err)
}

// decisionWrites returns the statements that write d's grants and
// snapshot in RecordGrants' trip (each guarded by @loot_won = 1), and
// their arguments; or the reason d is malformed.
func (s *Store) decisionWrites(d loot.Decision) (string, []any, error) {
	if err := loot.CheckDecision(d); err != nil {
		return "", nil, err
	}
	snap := d.Snapshot
	blob, err := json.Marshal(snap)
	if err != nil {
		return "", nil, fmt.Errorf("decision for %q: snapshot: %w: %w", d.Session, loot.ErrBadArgument, err)
	}
	var (
		stmts strings.Builder
		args  = make([]any, 0, 7*len(d.Grants)+8)
	)
	for _, g := range d.Grants {
		stmts.WriteString(s.q.grantRow + "; ")
		args = append(args, g.No, g.Session, int64(g.Player), g.Loot, g.Quantity, g.Rank, micros(d.Lease))
	}
	stmts.WriteString(s.q.recordAudit + "; ")
	args = append(args, d.Session, int64(snap.Fence), snap.Rule, len(snap.Members),
		snap.Effective(), len(d.Grants), snap.ClaimsHash, string(blob))
	return stmts.String(), args, nil
}

// refuseDecision answers RecordGrants of a malformed decision d (bad says
// how) without writing: the session's refusal if it has one (a stale
// fence, a canceled session, none), nil if d's fence closed it already (a
// repeat), else bad.
func (s *Store) refuseDecision(ctx context.Context, d loot.Decision, bad error) (loot.Session, error) {
	op := fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence)
	if err := loot.CheckContext(ctx); err != nil {
		return loot.Session{}, wrap(op, err)
	}
	sess, _, err := readSession(ctx, s.db, s.q.readSession, d.Session)
	if err != nil {
		return loot.Session{}, wrap(op, err)
	}
	apply, err := loot.CheckRecord(sess, d.Fence)
	if err != nil || !apply {
		return sess, wrap(op, err)
	}
	return loot.Session{}, wrap(op, bad)
}
