package seedverbatim

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// SQLTables is the document's tables on MySQL or MariaDB, created by
// docsql.Schema, every statement docsql's verbatim SQL. The database's
// clock is now: each statement runs on one connection whose timestamp
// was set to now just before it (SET timestamp), which NOW() and
// CURRENT_TIMESTAMP then read; production servers read their own. db must
// be opened with parseTime=true, loc UTC and time_zone '+00:00'.
func SQLTables(db *sql.DB, now func() time.Time) Tables { return &sqlTables{db: db, now: now} }

type sqlTables struct {
	db  *sql.DB
	now func() time.Time
}

// on runs f on a connection whose timestamp is now.
func (t *sqlTables) on(f func(ctx context.Context, d *docsql.DB, c *sql.Conn) error) error {
	ctx := context.Background()
	c, err := t.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// Seconds with six decimals: the server keeps the session timestamp to
	// the microsecond (what NOW(6) returns); NOW() truncates it to whole
	// seconds, as the in-memory tables' datetime does.
	at := t.now()
	if _, err := c.ExecContext(ctx, fmt.Sprintf("SET timestamp = %d.%06d", at.Unix(), at.Nanosecond()/1000)); err != nil {
		return err
	}
	return f(ctx, docsql.New(c), c)
}

func (t *sqlTables) CreateSession(no, loot string, total int, deadline time.Time) error {
	return t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		return d.CreateSession(ctx, no, "D", loot, total, deadline)
	})
}

func (t *sqlTables) CheckIntent(no string, now time.Time) (ok bool, err error) {
	err = t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		ok, err = d.CheckIntent(ctx, no, now)
		return err
	})
	return ok, err
}

func (t *sqlTables) UpsertIntent(in docsql.Intent) error {
	return t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error { return d.UpsertIntent(ctx, in) })
}

func (t *sqlTables) LockForSettle(no string) (ok bool, err error) {
	err = t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		ok, err = d.LockForSettle(ctx, no)
		return err
	})
	return ok, err
}

func (t *sqlTables) SelectRanked(no string) (loot string, total int, ranked []int64, err error) {
	err = t.on(func(ctx context.Context, d *docsql.DB, c *sql.Conn) error {
		if err := c.QueryRowContext(ctx, "SELECT loot_code, total_quantity FROM loot_session WHERE session_no = ?", no).Scan(&loot, &total); err != nil {
			return err
		}
		ranked, err = d.SelectRanked(ctx, no)
		return err
	})
	return loot, total, ranked, err
}

func (t *sqlTables) InsertGrantIgnore(grantNo, no string, player int64, loot string) error {
	return t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		return d.InsertGrantIgnore(ctx, grantNo, no, player, loot)
	})
}

func (t *sqlTables) MarkClosed(no string, allocated int) error {
	return t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		_, err := d.MarkClosed(ctx, no, allocated)
		return err
	})
}

func (t *sqlTables) Cancel(no string) (ok bool, err error) {
	err = t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		ok, err = d.CancelSession(ctx, no)
		return err
	})
	return ok, err
}

func (t *sqlTables) SelectPending() (ps []Pending, err error) {
	err = t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error {
		gs, err := d.SelectPending(ctx)
		for _, g := range gs {
			ps = append(ps, Pending{GrantNo: g.GrantNo, Session: g.SessionNo, Loot: g.LootCode, Player: g.PlayerID})
		}
		return err
	})
	return ps, err
}

func (t *sqlTables) MarkSuccess(grantNo string) error {
	return t.on(func(ctx context.Context, d *docsql.DB, _ *sql.Conn) error { return d.MarkSuccess(ctx, grantNo) })
}

// Read is the rows as an auditor reads them (a read error reads as no
// session, as the in-memory tables' missing row does).
func (t *sqlTables) Read(no string) lootfaults.Record {
	ctx := context.Background()
	var status string
	if err := t.db.QueryRowContext(ctx, "SELECT status FROM loot_session WHERE session_no = ?", no).Scan(&status); err != nil {
		return lootfaults.Record{}
	}
	rec := lootfaults.Record{Status: lootfaults.Status(status)}
	rows, err := t.db.QueryContext(ctx, "SELECT player_id, intent_type, created_at, fair_score FROM loot_intent WHERE session_no = ?", no)
	if err != nil {
		return lootfaults.Record{}
	}
	for rows.Next() {
		var c lootfaults.Claim
		if err := rows.Scan(&c.Player, &c.Intent, &c.At, &c.Fair); err != nil {
			rows.Close()
			return lootfaults.Record{}
		}
		rec.Claims = append(rec.Claims, c)
	}
	rows.Close()
	slices.SortFunc(rec.Claims, func(a, b lootfaults.Claim) int { return cmp.Compare(a.Player, b.Player) })
	grows, err := t.db.QueryContext(ctx, "SELECT player_id FROM loot_grant WHERE session_no = ? ORDER BY id", no)
	if err != nil {
		return lootfaults.Record{}
	}
	defer grows.Close()
	for grows.Next() {
		var p lootfaults.PlayerID
		if err := grows.Scan(&p); err != nil {
			return lootfaults.Record{}
		}
		rec.Granted = append(rec.Granted, p)
	}
	return rec
}
