package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// change is one status change: a conditional UPDATE of the session row,
// then (if it matched) more writes in the same transaction, then the row
// read back under lock.
type change struct {
	update string
	args   []any
	// then, if set, runs after the UPDATE matched.
	then func(tx *sql.Tx) error
	// refused judges the session as read back when the UPDATE matched
	// nothing: the guard's error, or nil for a repeat of a change already
	// made (then the session is returned as it is).
	refused func(sess loot.Session, now time.Time) error
}

// errRaced is the answer when a refused UPDATE's row, read back, would
// have been accepted: under READ COMMITTED the row may have moved between
// the two statements. Nothing was written; the call may be repeated.
var errRaced = errors.New("the session changed between the conditional write and its read back; nothing was written, repeat the call")

func (s *Store) change(ctx context.Context, no string, c change) (loot.Session, error) {
	return inTx(ctx, s, func(tx *sql.Tx) (loot.Session, error) {
		res, err := tx.ExecContext(ctx, c.update, c.args...)
		if err != nil {
			return loot.Session{}, err
		}
		matched, err := oneRow(res)
		if err != nil {
			return loot.Session{}, err
		}
		if matched && c.then != nil {
			if err := c.then(tx); err != nil {
				return loot.Session{}, err
			}
		}
		sess, now, err := readSession(ctx, tx, s.q.readSessionLocked, no)
		if err != nil || matched {
			return sess, err
		}
		return sess, c.refused(sess, now)
	})
}

// StartClaiming implements loot.Store.
func (s *Store) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	sess, err := s.change(ctx, no, change{
		update: s.q.startClaim, args: []any{no},
		refused: func(sess loot.Session, _ time.Time) error {
			return refusal(loot.CheckStart(sess))
		},
	})
	return sess, wrap("start claiming "+no, err)
}

// Cancel implements loot.Store.
func (s *Store) Cancel(ctx context.Context, no string) (loot.Session, error) {
	sess, err := s.change(ctx, no, change{
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

// BeginSettle implements loot.Store: the settle CAS, then the frozen claims
// read under its lock.
func (s *Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, wrap("begin settle "+no, fmt.Errorf("settle lease %v: %w", lease, loot.ErrBadArgument))
	}
	var claims []loot.Claim
	sess, err := s.change(ctx, no, change{
		update: s.q.beginSettle, args: []any{micros(lease), no},
		then: func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, s.q.frozenClaims, no)
			if err != nil {
				return err
			}
			claims, _, err = scanClaims(rows, no, false)
			return err
		},
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

// RecordGrants implements loot.Store: the fenced UPDATE closing the
// session, the grants in one multi-row INSERT, the audit row, in one
// transaction.
func (s *Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	sess, err := s.change(ctx, d.Session, change{
		update: s.q.record, args: []any{len(d.Grants), d.Session, int64(d.Fence)},
		then: func(tx *sql.Tx) error { return s.insertDecision(ctx, tx, d) },
		refused: func(sess loot.Session, _ time.Time) error {
			return refusal(loot.CheckRecord(sess, d.Fence))
		},
	})
	return sess, wrap(fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence), err)
}

// insertDecision writes d's grants and snapshot (in RecordGrants'
// transaction, after its UPDATE matched). A malformed decision
// (loot.CheckDecision, or a grant number uk_grant_no holds already) is
// ErrBadArgument and rolls everything back.
func (s *Store) insertDecision(ctx context.Context, tx *sql.Tx, d loot.Decision) error {
	if err := loot.CheckDecision(d); err != nil {
		return err
	}
	if len(d.Grants) > 0 {
		args := make([]any, 0, 7*len(d.Grants))
		for _, g := range d.Grants {
			args = append(args, g.No, g.Session, int64(g.Player), g.Loot, g.Quantity, g.Rank, micros(d.Lease))
		}
		_, err := tx.ExecContext(ctx, s.q.recordGrants+placeholders(len(d.Grants), s.q.grantRow), args...)
		if isDuplicate(err) {
			return fmt.Errorf("decision for %q: %w: %w", d.Session, loot.ErrBadArgument, err)
		}
		if err != nil {
			return err
		}
	}
	snap := d.Snapshot
	blob, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("decision for %q: snapshot: %w: %w", d.Session, loot.ErrBadArgument, err)
	}
	_, err = tx.ExecContext(ctx, s.q.recordAudit, d.Session, int64(snap.Fence), snap.Rule, len(snap.Members),
		snap.Effective(), len(d.Grants), snap.ClaimsHash, string(blob))
	return err
}
