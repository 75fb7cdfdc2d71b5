package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/ref/loot"
)

// claimed is what Claim answers.
type claimed struct {
	c       loot.Claim
	created bool
}

// Claim implements loot.Store in one round trip: queries.claimTx, its own
// transaction of the claim statement (an INSERT ... SELECT ... ON
// DUPLICATE KEY UPDATE judging status, deadline and membership under a
// shared lock on the session row) and the read that answers it, sent as
// one multi-statement query. Rows affected: 1 inserted, 2 a duplicate
// (changed intent or retry: requests always moves), 0 refused; a refusal
// names its reason from the same read (CheckClaim). A deadlock victim
// (InnoDB rolled the transaction back whole) runs again, up to three
// times, as inTx's transactions do.
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	op := fmt.Sprintf("claim %s by %d", no, p)
	if !in.Valid() {
		return loot.Claim{}, false, wrap("claim", fmt.Errorf("intent %q: %w", in, loot.ErrBadArgument))
	}
	if err := loot.CheckContext(ctx); err != nil {
		return loot.Claim{}, false, wrap(op, err)
	}
	for attempt := 1; ; attempt++ {
		r, err := s.claimTx(ctx, no, p, in)
		var me *mysql.MySQLError
		if attempt < 3 && errors.As(err, &me) && me.Number == errDeadlock {
			continue
		}
		return r.c, r.created, wrap(op, err)
	}
}

// claimTx sends queries.claimTx once and judges its answer.
func (s *Store) claimTx(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (claimed, error) {
	r, err := s.sendClaim(ctx, no, p, in)
	switch {
	case err != nil:
		return claimed{}, err
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

// sendClaim runs queries.claimTx on a connection of its own. The server
// stops a multi-statement query at its first failing statement, which
// would leave the transaction open on the connection; so a send that
// fails in any way discards its connection (driver.ErrBadConn from Raw),
// and the server rolls the transaction back as it closes it, with no
// round trip for a ROLLBACK. A refusal is no failure here: the COMMIT ran.
func (s *Store) sendClaim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (r claimRow, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return claimRow{}, err
	}
	defer func() {
		if err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	rows, err := conn.QueryContext(ctx, s.q.claimTx, in, in.Priority(), int64(p), no, int64(p), int64(p), no)
	if err != nil {
		return claimRow{}, err
	}
	for rows.Next() {
		r.found = true
		if err := rows.Scan(&r.n, &r.status, &r.deadline, &r.fence, &r.member, &r.intent, &r.at, &r.now); err != nil {
			rows.Close()
			return claimRow{}, err
		}
	}
	for rows.NextResultSet() { // the COMMIT's answer: its error is rows.Err
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return claimRow{}, err
	}
	return r, nil
}
