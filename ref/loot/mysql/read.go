package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// querier is what the reads run on: the pool or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readSession reads session no with query (readSession or
// readSessionLocked) and the store's now; ErrNotFound if there is none.
func readSession(ctx context.Context, q querier, query, no string) (loot.Session, time.Time, error) {
	sess, now, err := scanSession(q.QueryRowContext(ctx, query, no).Scan, no)
	if errors.Is(err, sql.ErrNoRows) {
		return loot.Session{}, time.Time{}, fmt.Errorf("session %q: %w", no, loot.ErrNotFound)
	}
	return sess, now, err
}

// scanSession scans what lead points to, then sessionColumns and the
// store's now, with scan (a Row's or a Rows' Scan).
func scanSession(scan func(dest ...any) error, no string, lead ...any) (loot.Session, time.Time, error) {
	var (
		s       loot.Session
		until   sql.NullTime
		members sql.NullString
		now     time.Time
	)
	err := scan(append(lead, &s.No, &s.Dungeon, &s.Loot, &s.Quantity, &s.Allocated,
		&s.Status, &s.Rule, &s.Deadline, &s.Fence, &until, &s.OpenedAt, &members, &now)...)
	if err != nil {
		return loot.Session{}, time.Time{}, err
	}
	if until.Valid {
		s.SettleUntil = until.Time
	}
	if s.Members, err = parseMembers(members.String); err != nil {
		return loot.Session{}, time.Time{}, fmt.Errorf("session %q: %w", no, err)
	}
	return s, now, nil
}

// parseMembers reads a member list, "101,102,103" (already sorted):
// loot_member_list's row, or GROUP_CONCAT's of loot_member (sessionColumns).
func parseMembers(list string) ([]loot.PlayerID, error) {
	if list == "" {
		return nil, nil
	}
	fields := strings.Split(list, ",")
	ms := make([]loot.PlayerID, len(fields))
	for i, f := range fields {
		p, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("member list %q: %w", list, err)
		}
		ms[i] = loot.PlayerID(p)
	}
	return ms, nil
}

// Session implements loot.Reader.
func (s *Store) Session(ctx context.Context, no string) (loot.Session, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return loot.Session{}, wrap("session", err)
	}
	sess, _, err := readSession(ctx, s.db, s.q.readSession, no)
	return sess, wrap("session", err)
}

// Claims implements loot.Reader: one statement, the session LEFT JOINed
// to its claims, so a missing session is told from one without claims.
func (s *Store) Claims(ctx context.Context, no string) ([]loot.Claim, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return nil, wrap("claims", err)
	}
	rows, err := s.db.QueryContext(ctx, s.q.claims, no)
	if err != nil {
		return nil, wrap("claims", err)
	}
	cs, found, err := scanClaims(rows, no, true)
	if err == nil && !found {
		err = fmt.Errorf("session %q: %w", no, loot.ErrNotFound)
	}
	return cs, wrap("claims", err)
}

// scanClaims reads rows of (player_id, intent_type, created_at), which are
// NULL for the session row of an outer join without claims when outer.
// found reports whether there was any row at all.
func scanClaims(rows *sql.Rows, no string, outer bool) (cs []loot.Claim, found bool, err error) {
	cs = []loot.Claim{}
	for rows.Next() {
		found = true
		var (
			p  sql.NullInt64
			in sql.NullString
			at sql.NullTime
		)
		if err := rows.Scan(&p, &in, &at); err != nil {
			rows.Close()
			return nil, false, err
		}
		if !p.Valid && outer {
			continue
		}
		cs = append(cs, loot.Claim{Session: no, Player: loot.PlayerID(p.Int64), Intent: loot.Intent(in.String), At: at.Time})
	}
	return cs, found, errors.Join(rows.Err(), rows.Close())
}

// Grants implements loot.Reader, as Claims does.
func (s *Store) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return nil, wrap("grants", err)
	}
	rows, err := s.db.QueryContext(ctx, s.q.grants, no)
	if err != nil {
		return nil, wrap("grants", err)
	}
	gs := []loot.Grant{}
	found := false
	for rows.Next() {
		found = true
		var g nullGrant
		if err := rows.Scan(g.dest()...); err != nil {
			rows.Close()
			return nil, wrap("grants", err)
		}
		if g.no.Valid {
			gs = append(gs, g.grant())
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, wrap("grants", err)
	}
	if !found {
		return nil, wrap("grants", fmt.Errorf("session %q: %w", no, loot.ErrNotFound))
	}
	return gs, nil
}

// nullGrant scans grantColumns, NULL in an outer join without grants.
type nullGrant struct {
	no, session, lootCode, status sql.NullString
	player                        sql.NullInt64
	quantity, rank, attempts      sql.NullInt32
	leaseUntil                    sql.NullTime
}

func (g *nullGrant) dest() []any {
	return []any{&g.no, &g.session, &g.player, &g.lootCode, &g.quantity, &g.rank, &g.status, &g.attempts, &g.leaseUntil}
}

func (g *nullGrant) grant() loot.Grant {
	return loot.Grant{
		No: g.no.String, Session: g.session.String, Player: loot.PlayerID(g.player.Int64), Loot: g.lootCode.String,
		Quantity: int(g.quantity.Int32), Rank: int(g.rank.Int32), Status: loot.GrantStatus(g.status.String),
		Attempts: int(g.attempts.Int32), LeaseUntil: g.leaseUntil.Time,
	}
}

// Snapshot implements loot.Reader. The snapshot is stored as the JSON of
// loot.Snapshot in loot_audit.snapshot.
func (s *Store) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return loot.Snapshot{}, wrap("snapshot", err)
	}
	var (
		st   loot.Status
		blob sql.NullString
	)
	err := s.db.QueryRowContext(ctx, s.q.snapshot, no).Scan(&st, &blob)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return loot.Snapshot{}, wrap("snapshot", fmt.Errorf("session %q: %w", no, loot.ErrNotFound))
	case err != nil:
		return loot.Snapshot{}, wrap("snapshot", err)
	case st == loot.StatusCanceled:
		return loot.Snapshot{}, wrap("snapshot", fmt.Errorf("session %q: %w", no, loot.ErrCanceled))
	case st != loot.StatusClosed:
		return loot.Snapshot{}, wrap("snapshot", fmt.Errorf("session %q is %s: %w", no, st, loot.ErrNotDue))
	case !blob.Valid:
		return loot.Snapshot{}, wrap("snapshot", fmt.Errorf("session %q is CLOSED without an audit row", no))
	}
	var snap loot.Snapshot
	if err := json.Unmarshal([]byte(blob.String), &snap); err != nil {
		return loot.Snapshot{}, wrap("snapshot", fmt.Errorf("session %q: %w", no, err))
	}
	return snap, nil
}
