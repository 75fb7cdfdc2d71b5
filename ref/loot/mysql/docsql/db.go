package docsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// DB runs the document's statements on a database. Open the *sql.DB with
// parseTime=true; the document stores every time in one zone (its
// serverTimezone), so give the connection's loc and time_zone the same
// zone.
//
// It runs the steps as the document's Java does: submitIntent checks, then
// upserts; LootSettleService.settle locks, ranks, inserts grants one by
// one, then closes. Not from the document: CreateSession, CheckIntent,
// CancelSession, SelectPending and MarkSuccess (the document describes each
// step but shows no SQL for it). The Redis lock is left out (the document
// calls it an optimisation; the conditional UPDATE decides).
type DB struct {
	db Querier
}

// Querier is what a DB runs its statements on: a *sql.DB, or one
// connection (*sql.Conn) or transaction (*sql.Tx) of it.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// New returns a DB on db.
func New(db Querier) *DB { return &DB{db: db} }

// CreateSchema runs Schema.
func (d *DB) CreateSchema(ctx context.Context) error {
	for _, stmt := range Schema {
		if _, err := d.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("docsql: schema: %w", err)
		}
	}
	return nil
}

// CreateSession runs CreateSession.
func (d *DB) CreateSession(ctx context.Context, sessionNo, dungeonCode, lootCode string, totalQuantity int, deadlineAt time.Time) error {
	_, err := d.db.ExecContext(ctx, CreateSession.SQL, sessionNo, dungeonCode, lootCode, totalQuantity, deadlineAt)
	return wrap(CreateSession, err)
}

// Intent is the document's LootIntent record.
type Intent struct {
	SessionNo  string
	PlayerID   int64
	IntentType string
	Priority   int
	FairScore  int
	CreatedAt  time.Time
}

// NewIntent builds an intent as LootIntent.need and .greed do: priority 10
// for NEED, 1 for GREED (0 for PASS, which has no factory), the fair score
// as the client sent it, created at the application's now.
func NewIntent(sessionNo string, playerID int64, intentType string, fairScore int, now time.Time) Intent {
	prio := map[string]int{"NEED": 10, "GREED": 1}[intentType]
	return Intent{sessionNo, playerID, intentType, prio, fairScore, now}
}

// CheckIntent is submitIntent's check: the session exists, is CLAIMING,
// and its deadline is after the application's now.
func (d *DB) CheckIntent(ctx context.Context, sessionNo string, now time.Time) (bool, error) {
	var (
		status   string
		deadline time.Time
	)
	err := d.db.QueryRowContext(ctx, CheckIntent.SQL, sessionNo).Scan(&status, &deadline)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, wrap(CheckIntent, err)
	}
	return status == "CLAIMING" && now.Before(deadline), nil
}

// UpsertIntent runs UpsertIntent.
func (d *DB) UpsertIntent(ctx context.Context, in Intent) error {
	_, err := d.db.ExecContext(ctx, UpsertIntent.SQL, in.SessionNo, in.PlayerID, in.IntentType, in.Priority, in.FairScore, in.CreatedAt)
	return wrap(UpsertIntent, err)
}

// SubmitIntent is submitIntent: CheckIntent, then (if it passed)
// UpsertIntent, two statements with nothing between them to stop the
// session from being locked for settling in the meantime.
func (d *DB) SubmitIntent(ctx context.Context, in Intent) (accepted bool, err error) {
	ok, err := d.CheckIntent(ctx, in.SessionNo, in.CreatedAt)
	if err != nil || !ok {
		return false, err
	}
	return true, d.UpsertIntent(ctx, in)
}

// LockForSettle runs LockForSettle and reports whether it matched.
func (d *DB) LockForSettle(ctx context.Context, sessionNo string) (bool, error) {
	return d.matched(ctx, LockForSettle, sessionNo)
}

// SelectRanked runs SelectRanked and returns the player ids in the order
// the database returned them.
func (d *DB) SelectRanked(ctx context.Context, sessionNo string) ([]int64, error) {
	rows, err := d.db.QueryContext(ctx, SelectRanked.SQL, sessionNo)
	if err != nil {
		return nil, wrap(SelectRanked, err)
	}
	defer rows.Close()
	var ps []int64
	for rows.Next() {
		var p int64
		var fair int
		if err := rows.Scan(&p, &fair); err != nil {
			return nil, wrap(SelectRanked, err)
		}
		ps = append(ps, p)
	}
	return ps, wrap(SelectRanked, rows.Err())
}

// GrantNo is the document's key: sessionNo + ":" + playerId + ":" + lootCode.
func GrantNo(sessionNo string, playerID int64, lootCode string) string {
	return sessionNo + ":" + strconv.FormatInt(playerID, 10) + ":" + lootCode
}

// InsertGrantIgnore runs InsertGrantIgnore.
func (d *DB) InsertGrantIgnore(ctx context.Context, grantNo, sessionNo string, playerID int64, lootCode string) error {
	_, err := d.db.ExecContext(ctx, InsertGrantIgnore.SQL, grantNo, sessionNo, playerID, lootCode)
	return wrap(InsertGrantIgnore, err)
}

// MarkClosed runs MarkClosed and reports whether it matched.
func (d *DB) MarkClosed(ctx context.Context, sessionNo string, allocated int) (bool, error) {
	return d.matched(ctx, MarkClosed, allocated, sessionNo)
}

// Settle is LootSettleService.settle without its Redis lock: LockForSettle
// (nothing more if it did not match), SelectRanked, InsertGrantIgnore for
// each of the first min(totalQuantity, ranked) players, MarkClosed; each
// statement on its own (the method is not @Transactional). It returns the
// grants it inserted, and settled false when the CAS did not match.
func (d *DB) Settle(ctx context.Context, sessionNo, lootCode string, totalQuantity int) (settled bool, granted int, err error) {
	if ok, err := d.LockForSettle(ctx, sessionNo); err != nil || !ok {
		return false, 0, err
	}
	ranked, err := d.SelectRanked(ctx, sessionNo)
	if err != nil {
		return true, 0, err
	}
	grantCount := min(totalQuantity, len(ranked))
	for i := range grantCount {
		if err := d.InsertGrantIgnore(ctx, GrantNo(sessionNo, ranked[i], lootCode), sessionNo, ranked[i], lootCode); err != nil {
			return true, i, err
		}
	}
	_, err = d.MarkClosed(ctx, sessionNo, grantCount)
	return true, grantCount, err
}

// CancelSession runs CancelSession and reports whether it matched.
func (d *DB) CancelSession(ctx context.Context, sessionNo string) (bool, error) {
	return d.matched(ctx, CancelSession, sessionNo)
}

// PendingGrant is a row SelectPending returns.
type PendingGrant struct {
	GrantNo, SessionNo, LootCode string
	PlayerID                     int64
}

// SelectPending runs SelectPending.
func (d *DB) SelectPending(ctx context.Context) ([]PendingGrant, error) {
	rows, err := d.db.QueryContext(ctx, SelectPending.SQL)
	if err != nil {
		return nil, wrap(SelectPending, err)
	}
	defer rows.Close()
	var gs []PendingGrant
	for rows.Next() {
		var g PendingGrant
		if err := rows.Scan(&g.GrantNo, &g.SessionNo, &g.PlayerID, &g.LootCode); err != nil {
			return nil, wrap(SelectPending, err)
		}
		gs = append(gs, g)
	}
	return gs, wrap(SelectPending, rows.Err())
}

// MarkSuccess runs MarkSuccess.
func (d *DB) MarkSuccess(ctx context.Context, grantNo string) error {
	_, err := d.db.ExecContext(ctx, MarkSuccess.SQL, grantNo)
	return wrap(MarkSuccess, err)
}

// matched runs s, an UPDATE of one session row, and reports whether it
// matched the row.
func (d *DB) matched(ctx context.Context, s Statement, args ...any) (bool, error) {
	res, err := d.db.ExecContext(ctx, s.SQL, args...)
	if err != nil {
		return false, wrap(s, err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrap(s, err)
}

func wrap(s Statement, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("docsql: %s: %w", s.Name, err)
}
