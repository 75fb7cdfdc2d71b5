package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/redact"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/internal/delivered"
)

// Errors this package returns (wrapped; test with errors.Is). The Store
// returns loot's sentinels as its definite answers, and any other error
// means "outcome unknown", as loot.Store documents.
var (
	// ErrBadOptions: Open was given an invalid DSN or option.
	ErrBadOptions = errors.New("mysql: invalid options")
	// ErrSchema: a table of Schema exists with other columns, or a
	// routine of Schema's name (its version) with another body.
	ErrSchema = errors.New("mysql: a table or routine has an incompatible schema")
)

// Options configures Open. The zero value is valid.
type Options struct {
	// Config, if set, adjusts the driver configuration parsed from the DSN
	// (TLS, timeouts, dialer) before Open applies what the store requires:
	// parseTime, UTC (Loc and the session's time_zone '+00:00') and
	// client-side parameter interpolation (one round trip per statement)
	// and multi-statement queries (a claim's or a status change's one
	// round trip).
	Config func(*mysql.Config)
	// ClockTable is for tests only: statements read "now" from the single
	// row of this table (column at, DATETIME(6)), which the test creates
	// and moves, instead of from NOW(6). loottest's checks need a clock
	// that stands still between the moves they make. Production leaves it
	// empty: deadlines and leases are the database clock's to judge.
	ClockTable string
	// Batch coalesces concurrent Claim, BeginSettle, RecordGrants and Inventory.DeliverBatch calls
	// on this Store (internal/coalesce) into one round trip per kind and
	// batch, each call keeping its own guard and answer, as
	// ref/loot/postgres's Options.Batch does; coalesce.go says how.
	Batch bool
	_     struct{}
}

var identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Store is a loot.Store (and loot.Reader) on MySQL or MariaDB. Safe for
// concurrent use; one Store per process is the intended use, any number
// of processes may share the database.
//
// Every method is one statement or one short transaction of conditional
// writes, never a read followed by a write; Claim, BeginSettle and
// RecordGrants are each one CALL of a routine of Schema, which runs that
// transaction server-side (one statement sent, parsed once per
// connection: Claim says why). "now" is the database's
// NOW(6), in UTC, and it alone judges deadlines and leases. Isolation: the
// store runs under the server's, REPEATABLE READ by default, but for
// LeaseGrants' transaction, which it runs READ COMMITTED (so a
// compensator's scan takes no gap lock that would stall the settles'
// grants: queries.go's leaseSelect).
// Its correctness rests on locking reads and conditional UPDATEs (the
// claim reads the session row LOCK IN SHARE MODE, so it serializes with
// the settle CAS's exclusive lock), not on the level: the tests run it
// under REPEATABLE READ and READ COMMITTED (queries.go argues each
// statement).
//
// The caller's duties, beside loot.Service's:
//
//  1. Give the application's account SELECT, INSERT, UPDATE and EXECUTE
//     on the database; create the tables and routines from Schema with
//     another account (the mariadb client runs it as it is), or let Open
//     create them once with CREATE and CREATE ROUTINE.
//  2. Keep Options.ClockTable empty outside tests.
//  3. Use one Store per process; Close it at the end.
//
// Where it departs from the source document's SQL (its LootMapper and
// schema.sql, kept verbatim in ref/loot/mysql/docsql), and why:
//
//   - Claims are one INSERT ... SELECT ... ON DUPLICATE KEY UPDATE that
//     judges status, deadline and membership under a shared lock on the
//     session row; the document checks first and upserts after, so a claim
//     can land after settling began.
//   - Times are DATETIME(6): the document's DATETIME ties every claim of a
//     second, and its ORDER BY then leaves the winner to the order the
//     server reads tied rows in (on MariaDB, player id: a later claim wins);
//     ranking here ends on the player id (loot.Ranker), outside SQL.
//   - The settle CAS also takes over an expired settler and bumps a fence;
//     closing, the grants (one INSERT of them all) and the audit row are
//     one transaction guarded by that fence, instead of grants inserted
//     one by one, a round trip each, before a separate markClosed.
//   - grant_no is VARCHAR(160), and codes compare byte for byte: Schema
//     says why, with the rest of the tables' changes.
type Store struct {
	db    *sql.DB
	q     queries
	batch batchers // zero unless Options.Batch

	delivered delivered.Record // the Inventory's last batches (ref/loot/internal/delivered)
	settling  settling         // won BeginSettles until their RecordGrants (settling.go)
}

var _ loot.Store = (*Store)(nil)

// Open connects to the database at dsn (go-sql-driver/mysql's form,
// "user:password@tcp(host:3306)/db"), creates what is missing of Schema,
// and returns the store. ctx bounds only the connecting and the schema
// setup.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return nil, fmt.Errorf("mysql: open: %w", err)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		// The driver's message may quote a piece of dsn: its password's.
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, redact.Error(err, dsn))
	}
	if opts.ClockTable != "" && !identifier.MatchString(opts.ClockTable) {
		return nil, fmt.Errorf("%w: clock table %q must match %s", ErrBadOptions, opts.ClockTable, identifier)
	}
	if opts.Config != nil {
		opts.Config(cfg)
	}
	cfg.ParseTime, cfg.Loc, cfg.InterpolateParams = true, time.UTC, true
	// Claim and every status change send their transaction as one
	// multi-statement query (one round trip: oneTrip); every argument is
	// interpolated by the driver, escaped, never spliced into SQL by the
	// store.
	cfg.MultiStatements = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	// A session opened before loot_member_list has its members read with
	// GROUP_CONCAT, which MySQL cuts at 1024 bytes by default (MariaDB at
	// 1 MiB): about 50 players.
	cfg.Params["group_concat_max_len"] = "16777216"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	db := sql.OpenDB(conn)
	now := "NOW(6)"
	if opts.ClockTable != "" {
		now = "(SELECT at FROM " + opts.ClockTable + ")"
	}
	if err := createSchema(ctx, db, now); err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, q: newQueries(now)}
	if opts.Batch {
		s.startBatchers()
	}
	return s, nil
}

// DB returns the store's connection pool (for the caller's own queries in
// the same database).
func (s *Store) DB() *sql.DB { return s.db }

// Close stops the batchers (Options.Batch), answering what they still hold
// with an error, and closes the pool. It is idempotent.
func (s *Store) Close() error {
	s.stopBatchers()
	return s.db.Close()
}

// errDeadlock is InnoDB's ER_LOCK_DEADLOCK: it rolled the whole transaction
// back, so nothing happened and the transaction may run again.
const errDeadlock = 1213

// inTx runs fn in a transaction and commits it. A deadlock victim (InnoDB
// rolled it back whole) runs again, up to three times: the store's
// transactions take their locks in one order (session row, then claim,
// grant or ledger rows; grants by unique key before their clustered row
// only in Deliver and MarkDelivered), so a deadlock is not expected, but it
// costs nothing to be safe from one. An error from fn rolls back and is
// returned as it is; so does a panic, which then goes on (the transaction
// would otherwise hold its connection for good). A nil ctx is refused
// before the pool sees it (loot.CheckContext).
func inTx[T any](ctx context.Context, s *Store, fn func(tx *sql.Tx) (T, error)) (T, error) {
	return inTxAt(ctx, s, nil, fn)
}

// inTxAt is inTx with the transaction's options (nil: the server's
// isolation level).
func inTxAt[T any](ctx context.Context, s *Store, opts *sql.TxOptions, fn func(tx *sql.Tx) (T, error)) (T, error) {
	if err := loot.CheckContext(ctx); err != nil {
		var zero T
		return zero, err
	}
	for attempt := 1; ; attempt++ {
		v, err := runTx(ctx, s.db, opts, fn)
		var me *mysql.MySQLError
		if attempt < 3 && errors.As(err, &me) && me.Number == errDeadlock {
			continue
		}
		return v, err
	}
}

func runTx[T any](ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(tx *sql.Tx) (T, error)) (T, error) {
	var zero T
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return zero, err
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback() // fn panicked
		}
	}()
	v, err := fn(tx)
	if err != nil {
		done = true
		_ = tx.Rollback()
		return zero, err
	}
	done = true
	if err := tx.Commit(); err != nil {
		return zero, err
	}
	return v, nil
}

// wrap names the operation. A sentinel of loot stays one (errors.Is), and
// a data error is loot.ErrBadArgument (see isDataError).
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case isDataError(err):
		return fmt.Errorf("mysql: %s: %w: %w", op, loot.ErrBadArgument, err)
	}
	return fmt.Errorf("mysql: %s: %w", op, err)
}

// dataErrors are the server's refusals of a value an argument carried:
// ER_WARN_DATA_OUT_OF_RANGE 1264 (a quantity over INT), ER_TRUNCATED_WRONG_VALUE
// 1292 (a datetime out of DATETIME's range), ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
// 1366 (invalid UTF-8 for a utf8mb4 column), ER_DATA_TOO_LONG 1406 (over
// VARCHAR(64)). MariaDB reports 1366 under SQLSTATE 22007 but MySQL under
// HY000, hence the numbers beside the class. A CHECK of Schema refusing a
// row is the same kind of answer (the statement failed, nothing was
// written, the same values fail again): ER_CONSTRAINT_FAILED 4025 on
// MariaDB, ER_CHECK_CONSTRAINT_VIOLATED 3819 on MySQL 8, both SQLSTATE
// 23000, which a duplicate key shares, hence numbers again.
var dataErrors = []uint16{1264, 1292, 1366, 1406, 3819, 4025}

// isDataError reports whether err is the server refusing an argument's
// value (SQLSTATE class 22, data exception, or one of dataErrors). Strict
// mode (MariaDB's and MySQL's default) fails the statement, and the
// transaction around it rolls back: nothing was written, and the same
// arguments would be refused again, so this is a definite answer, not an
// unknown outcome. loot.Spec.Normalize and the Service refuse such input
// before it gets here; this is the second line, for a caller of the Store
// itself.
func isDataError(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	return string(me.SQLState[:2]) == "22" || slices.Contains(dataErrors, me.Number)
}

// isDuplicate reports whether err is ER_DUP_ENTRY: a unique key refused
// the row.
func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}

// isDuplicateOf reports whether err is ER_DUP_ENTRY of unique key key,
// which the server's message names ("for key 'uk_grant_no'" on MariaDB,
// "'loot_grant.uk_grant_no'" on MySQL 8): a transaction sent in one trip
// cannot tell otherwise which of its statements failed.
func isDuplicateOf(err error, key string) bool {
	var me *mysql.MySQLError
	return isDuplicate(err) && errors.As(err, &me) && strings.Contains(me.Message, key+"'")
}

// placeholders returns n comma-separated groups of group, for a multi-row
// VALUES or an IN list.
func placeholders(n int, group string) string {
	return strings.TrimSuffix(strings.Repeat(group+",", n), ",")
}

// micros is d in whole microseconds, the precision of DATETIME(6): now +
// micros(d) is loot.StoreTime(now.Add(d)) for a now already at
// microseconds.
func micros(d time.Duration) int64 { return int64(d / time.Microsecond) }
