package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/internal/snapjson"
)

// Open implements loot.Store: one transaction of the session's INSERT
// (judging the deadline by the database's clock), its members' multi-row
// INSERT, their list's row (loot_member_list, which every read of the
// session joins: queries.go's sessionFrom), and the read back.
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
			if _, err := tx.ExecContext(ctx, s.q.openList, spec.No, memberList(spec.Members)); err != nil {
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

// memberList is loot_member_list's players for members, sorted ascending
// (loot.Spec.Normalize sorts them): what GROUP_CONCAT of loot_member
// ordered by player_id answers, so a session read either way reads the
// same (parseMembers).
func memberList(members []loot.PlayerID) string {
	b := make([]byte, 0, 8*len(members))
	for i, p := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return string(b)
}

// oneRow reports whether res affected one row (an INSERT ... ON DUPLICATE
// KEY UPDATE that changed nothing affects none).
func oneRow(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}

// change is one status change, sent as one transaction in one round trip
// (oneTrip): either a CALL of one of Schema's routines (call), which
// does the same server-side, or a multi-statement query of a conditional
// UPDATE of the session row, its ROW_COUNT() kept in @loot_won, and the
// session row read back under lock with @loot_won (readWon), then the
// COMMIT. Either answers with the session row and whether the UPDATE
// matched, then, for BeginSettle's routine (claims), its members with the
// frozen claims (scanMembersClaims).
type change struct {
	// call, if set, is the CALL sent with args; else update is.
	call   string
	update string
	args   []any
	// claims: the session row's member list is NULL, and the next set
	// has the members with the frozen claims (BeginSettle's routine).
	claims bool
	// refused judges the session as read back when the UPDATE matched
	// nothing: the guard's error, or nil for a repeat of a change already
	// made (then the session is returned as it is).
	refused func(sess loot.Session, now time.Time) error
	// wonBare answers a change whose routine answered its win with the
	// won flag alone (loot_record_v3): the session as the change left
	// it, which the routine did not read back. Nil for a change whose
	// routine always reads the session back.
	wonBare func() (loot.Session, error)
}

// errRaced is the answer when a refused UPDATE's row, read back, would
// have been accepted: under READ COMMITTED the row may have moved between
// the two statements. Nothing was written; the call may be repeated.
var errRaced = errors.New("the session changed between the conditional write and its read back; nothing was written, repeat the call")

// changed is what a change's trip read.
type changed struct {
	found  bool
	won    int64 // the UPDATE's ROW_COUNT(): 1 matched, 0 refused
	bare   bool  // the row was the won flag alone, no session (change.wonBare)
	sess   loot.Session
	now    time.Time
	claims []loot.Claim
}

func (s *Store) change(ctx context.Context, no string, c change) (loot.Session, []loot.Claim, error) {
	query, args := c.call, c.args
	if query == "" {
		query = "START TRANSACTION; " + c.update + "; SET @loot_won = ROW_COUNT(); " + s.q.readWon + "; COMMIT"
		args = append(slices.Clip(c.args), no)
	}
	r, err := oneTrip(ctx, s, query, args, func(rows *sql.Rows) (r changed, err error) {
		if c.wonBare != nil { // only a routine that may answer with its flag alone
			cols, err := rows.Columns()
			if err != nil {
				return changed{}, err
			}
			r.bare = len(cols) == 1
		}
		for rows.Next() {
			r.found = true
			if r.bare {
				err = rows.Scan(&r.won)
			} else {
				r.sess, r.now, err = scanSession(rows.Scan, no, &r.won)
			}
			if err != nil {
				return changed{}, err
			}
		}
		if err := rows.Err(); err != nil || !c.claims {
			return r, err
		}
		if err := nextSet(rows); err != nil {
			return changed{}, err
		}
		members, claims, err := scanMembersClaims(rows, no)
		if err != nil {
			return changed{}, err
		}
		r.sess.Members = members
		if r.won == 1 {
			r.claims = claims
		}
		return r, nil
	})
	if err != nil {
		return loot.Session{}, nil, err
	}
	if r.bare {
		if !r.found || r.won != 1 || c.wonBare == nil {
			return loot.Session{}, nil, fmt.Errorf("mysql: session %q: the routine answered won=%d without the session (found %t)", no, r.won, r.found)
		}
		sess, err := c.wonBare()
		return sess, nil, err
	}
	return c.answer(no, r)
}

// answer is c's answer for session no from what its trip read (r): the
// one place a change's read is judged, so a batch's calls (settlebatch.go)
// answer as they would alone.
func (c change) answer(no string, r changed) (loot.Session, []loot.Claim, error) {
	switch {
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

// BeginSettle implements loot.Store in one round trip and one statement
// sent (change): the CALL of Schema's loot_begin_settle_v2, whose
// transaction is the settle CAS, the session row read back under its lock,
// then the session's members with their claims, frozen when the CAS
// matched. Under Options.Batch,
// concurrent calls share one CALL (settlebatch.go); a nil context, or a
// number no store can keep (loot.CheckSessionNo), which a batch's JSON
// could not carry as it is, never joins a batch, and is answered alone,
// as it would be without Batch.
func (s *Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, wrap("begin settle "+no, fmt.Errorf("settle lease %v: %w", lease, loot.ErrBadArgument))
	}
	if s.batch.settle.begins != nil && loot.CheckContext(ctx) == nil && loot.CheckSessionNo(no) == nil {
		return batchDo(ctx, "begin settle "+no, s.batch.settle.begins, beginReq{no, lease}, func() (loot.Frozen, error) {
			return s.beginOne(ctx, no, lease)
		})
	}
	return s.beginOne(ctx, no, lease)
}

// beginOne is BeginSettle's CALL for one session.
func (s *Store) beginOne(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	c := beginChange(no, lease)
	c.call = s.q.beginSettleCall
	sess, claims, err := s.change(ctx, no, c)
	if err != nil {
		return loot.Frozen{}, wrap("begin settle "+no, err)
	}
	s.settling.put(sess)
	return loot.Frozen{Session: sess, Claims: claims}, nil
}

// scanMembersClaims reads loot_begin_settle_v2's last set: one row per
// member of session no, in player order, with the member's claim or NULLs.
// Every claim is a member's (the claim statement joins loot_member, whose
// rows are never deleted), so the set holds every claim of the session.
// Claims are never nil (as scanClaims answers), members nil when there
// are none (as parseMembers answers).
func scanMembersClaims(rows *sql.Rows, no string) (members []loot.PlayerID, claims []loot.Claim, err error) {
	claims = []loot.Claim{}
	for rows.Next() {
		var (
			p  int64
			in sql.NullString
			at sql.NullTime
		)
		if err := rows.Scan(&p, &in, &at); err != nil {
			return nil, nil, err
		}
		members = append(members, loot.PlayerID(p))
		if in.Valid {
			claims = append(claims, loot.Claim{Session: no, Player: loot.PlayerID(p), Intent: loot.Intent(in.String), At: at.Time})
		}
	}
	return members, claims, rows.Err()
}

// beginChange is BeginSettle's change of session no, without its call:
// its arguments and how a refusal is explained.
func beginChange(no string, lease time.Duration) change {
	return change{
		args:   []any{no, micros(lease)},
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
	}
}

// RecordGrants implements loot.Store in one round trip and one statement
// sent (change): the CALL of Schema's loot_record_v3, whose transaction is
// the fenced UPDATE closing the session, then, if it matched, the grants
// (one INSERT from the JSON array of them) and the audit row, else the
// session read back to explain the refusal. A close that won answers with
// the session this Store's BeginSettle of that fence read (settling.go
// says why that is the row), or, when this Store did not win that fence,
// with the session read after the commit: one round trip more. A
// malformed decision (loot.CheckDecision, a grant string that is not
// valid UTF-8, or a grant number uk_grant_no holds already) is
// ErrBadArgument and writes nothing; a session the decision could not
// have closed anyway is refused as CheckRecord says, as a well-formed
// decision would be. Under Options.Batch, concurrent calls of
// well-formed decisions share one CALL (settlebatch.go).
func (s *Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	snapshot, bad := encodeDecision(d)
	if bad != nil {
		return s.refuseDecision(ctx, d, bad)
	}
	if s.batch.settle.records != nil && loot.CheckContext(ctx) == nil && batchable(d) {
		return batchDo(ctx, recordOp(d), s.batch.settle.records, recordReq{d, snapshot}, func() (loot.Session, error) {
			return s.recordOne(ctx, d, snapshot)
		})
	}
	return s.recordOne(ctx, d, snapshot)
}

// recordOne is RecordGrants' CALL of loot_record_v3 for one well-formed
// decision d, whose snapshot encodeDecision encoded.
func (s *Store) recordOne(ctx context.Context, d loot.Decision, snapshot string) (loot.Session, error) {
	c := recordChange(d)
	snap := d.Snapshot
	c.call, c.args = s.q.recordCall, []any{d.Session, int64(d.Fence), micros(d.Lease), grantRows(d),
		int64(snap.Fence), snap.Rule, len(snap.Members), snap.Effective(), snap.ClaimsHash, snapshot}
	c.wonBare = func() (loot.Session, error) { return s.closedSession(ctx, d) }
	sess, _, err := s.change(ctx, d.Session, c)
	s.settling.forget(d.Session, d.Fence)
	if isDuplicateOf(err, "uk_grant_no") {
		err = fmt.Errorf("decision for %q: %w: %w", d.Session, loot.ErrBadArgument, err)
	}
	return sess, wrap(recordOp(d), err)
}

// closedSession is session d.Session as d's close, which won, left it:
// the entry of this Store's BeginSettle of d's fence (settling), else the
// row read after the commit, which must then be CLOSED at d's fence
// (CLOSED is final, and the close just made it so).
func (s *Store) closedSession(ctx context.Context, d loot.Decision) (loot.Session, error) {
	if sess, ok := s.settling.closed(d); ok {
		return sess, nil
	}
	sess, _, err := readSession(ctx, s.db, s.q.readSession, d.Session)
	if err == nil && (sess.Status != loot.StatusClosed || sess.Fence != d.Fence) {
		err = fmt.Errorf("session %q: closed at fence %d, read back %s at fence %d", d.Session, d.Fence, sess.Status, sess.Fence)
	}
	return sess, err
}

// recordChange is RecordGrants' change for d, without its call: how a
// refusal is explained.
func recordChange(d loot.Decision) change {
	return change{refused: func(sess loot.Session, _ time.Time) error {
		return refusal(loot.CheckRecord(sess, d.Fence))
	}}
}

func recordOp(d loot.Decision) string {
	return fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence)
}

// encodeDecision returns d's audit snapshot as the audit row keeps it (the
// one value of a decision's CALL, single or batched, that costs its
// encoding), or the reason d is malformed. JSON cannot carry a string
// that is not valid UTF-8 (encoding/json would write U+FFFD in its place,
// and the server would record another grant number than the caller's),
// so such a grant string is refused here, as the server refuses it in a
// column (error 1366: isDataError).
func encodeDecision(d loot.Decision) (string, error) {
	if err := loot.CheckDecision(d); err != nil {
		return "", err
	}
	for _, g := range d.Grants {
		for _, v := range []string{g.No, g.Session, g.Loot} {
			if !utf8.ValidString(v) {
				return "", fmt.Errorf("decision for %q: grant %q: %q is not valid UTF-8: %w", d.Session, g.No, v, loot.ErrBadArgument)
			}
		}
	}
	snap := d.Snapshot
	// snapjson writes json.Marshal's bytes in 0.2-0.36 of its time: 4.2
	// and 7.0 us a 5-claim snapshot against 19.5 and 21.6, two runs of
	//	go test ./ref/loot/internal/snapjson -run '^$' -bench . -benchtime 20000x -count 2
	// The capacity is one allocation for a store's snapshot: measured 255
	// bytes with no claim and 189 a claim (8-byte session numbers, one-byte
	// codes, a 64-digit hash), so 300 + 200 a claim; longer codes regrow.
	blob, err := snapjson.Append(make([]byte, 0, 300+200*len(snap.Claims)), snap)
	if err != nil {
		return "", fmt.Errorf("decision for %q: snapshot: %w: %w", d.Session, loot.ErrBadArgument, err)
	}
	return string(blob), nil
}

// grantRows is loot_record_v3's p_grants for d, whose strings
// encodeDecision checked: one JSON array of [no, session, player, loot,
// quantity, rank] arrays, 80 bytes a grant as recordRows reckons.
func grantRows(d loot.Decision) string {
	j := newJSONRows(80 * len(d.Grants))
	for _, g := range d.Grants {
		j.row()
		j.str(g.No)
		j.str(g.Session)
		j.int(int64(g.Player))
		j.str(g.Loot)
		j.int(int64(g.Quantity))
		j.int(int64(g.Rank))
	}
	return j.String()
}

// refuseDecision answers RecordGrants of a malformed decision d (bad says
// how) without writing: the session's refusal if it has one (a stale
// fence, a canceled session, none), nil if d's fence closed it already (a
// repeat), else bad.
func (s *Store) refuseDecision(ctx context.Context, d loot.Decision, bad error) (loot.Session, error) {
	op := recordOp(d)
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
