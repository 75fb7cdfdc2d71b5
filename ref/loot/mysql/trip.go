package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/ref/loot"
)

// oneTrip runs query, a whole transaction (START TRANSACTION; ...; COMMIT)
// written as one multi-statement query, in one round trip, and hands its
// result sets to read (database/sql shows only those with columns: a
// statement that returns none, an INSERT or the COMMIT, is skipped, and its
// error surfaces where it would have been). A deadlock victim (InnoDB
// rolled the transaction back whole) runs again, up to three times, as
// inTx's transactions do.
//
// The server stops a multi-statement query at its first failing statement,
// which would leave the transaction open on the connection; so a send that
// fails in any way, read's error included, discards its connection
// (driver.ErrBadConn from Raw), and the server rolls the transaction back
// as it closes it, with no round trip for a ROLLBACK. A refusal is no
// failure here: the statements that judge it ran, and so did the COMMIT.
func oneTrip[T any](ctx context.Context, s *Store, query string, args []any, read func(*sql.Rows) (T, error)) (T, error) {
	if err := loot.CheckContext(ctx); err != nil {
		var zero T
		return zero, err
	}
	for attempt := 1; ; attempt++ {
		v, err := sendTrip(ctx, s.db, query, args, read)
		var me *mysql.MySQLError
		if attempt < 3 && errors.As(err, &me) && me.Number == errDeadlock {
			continue
		}
		return v, err
	}
}

func sendTrip[T any](ctx context.Context, db *sql.DB, query string, args []any, read func(*sql.Rows) (T, error)) (v T, err error) {
	var zero T
	conn, err := db.Conn(ctx)
	if err != nil {
		return zero, err
	}
	defer func() {
		if err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return zero, err
	}
	v, err = read(rows)
	for rows.NextResultSet() { // the rest, the COMMIT last: an error is rows.Err
	}
	if err := errors.Join(err, rows.Err(), rows.Close()); err != nil {
		return zero, err
	}
	return v, nil
}

// nextSet moves rows to its next result set, which a trip's read expects
// to be there: its absence means a statement before it failed, and that
// error is rows.Err.
func nextSet(rows *sql.Rows) error {
	if rows.NextResultSet() {
		return nil
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return errors.New("mysql: a result set of the transaction is missing")
}
