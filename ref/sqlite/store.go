// Package sqlite is the embedded durable Store and Sink of ref, on a SQLite
// file through the pure-Go driver modernc.org/sqlite (no cgo).
//
// Store (Open) keeps one row per claimed request, keyed by the full 128-bit
// ref.Key as a 16-byte BLOB PRIMARY KEY, so a 64-bit fingerprint collision
// is two rows, never a lost settlement. Sink (OpenSink, or Store.Sink for the
// atomic form) keeps the ledger of applied grants under a UNIQUE grant key
// and runs the caller's Effect (the credit) in the same transaction, so a
// credit and its grant key survive a crash together or not at all.
//
// Contract choices, beyond ref.Store's:
//
//   - Durability: WAL journal with synchronous=FULL, so a call that returned
//     nil survives kill -9 and power loss (NORMAL would survive kill -9 only).
//   - Claim: INSERT ... ON CONFLICT(key) DO NOTHING; created is its row
//     count. Only when it inserted nothing does a SELECT read the recorded
//     state, which can only be at or past Granted, so the two statements need
//     no transaction: whatever the SELECT sees is a state the record really
//     had after the claim.
//   - Commit: UPDATE ... WHERE key = ? AND state < ?, so states move only
//     forward even when Commits race; a Delivered record's payload is
//     dropped (nothing will read it again).
//   - Leases are stored as Unix nanoseconds (exact round trip); the zero
//     time means "expired at once". Other times outside 1678..2262 are
//     refused with ErrLeaseRange rather than silently wrapped.
//   - Errors: ref.ErrNotFound, ref.ErrClosed (wrapped), ErrLeaseRange,
//     ErrBadState, ErrBadPath; a cancelled context returns an error wrapping
//     ctx.Err(). Any other error is "outcome unknown" in ref's sense.
//   - Several Stores (processes, nodes) may open one file: SQLite's file
//     locks serialise writers, each waiting up to busyTimeout.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/ref"
	_ "modernc.org/sqlite" // registers the pure-Go driver "sqlite"
)

// Named errors (wrapped; test with errors.Is).
var (
	// ErrLeaseRange: a Claim's LeaseUntil cannot be stored as int64 Unix
	// nanoseconds (before 1678 or after 2262) and is not the zero time.
	ErrLeaseRange = errors.New("sqlite: lease time outside the storable range (1678..2262)")
	// ErrBadState: Commit of a value that is not a ref.State.
	ErrBadState = errors.New("sqlite: not a valid state")
	// ErrBadPath: Open or OpenSink with a path that cannot name a shared
	// file (empty, ":memory:", or containing '?', which starts the DSN's
	// parameters).
	ErrBadPath = errors.New("sqlite: bad database path")
)

// busyTimeout is how long a statement waits for another connection's write
// lock before failing with SQLITE_BUSY (an "outcome unknown" error the
// Settler returns for a retry). 10s: far above one write transaction (a few
// milliseconds with an fsync), so only a stuck writer makes it expire, and
// below ref.DefaultLease (30s) so a waiting claim fails before its own
// lease would let another node complete it.
const busyTimeout = 10 * time.Second

// maxConns bounds the connections of one handle. SQLite admits one writer
// at a time whatever the pool size; one connection makes a handle's callers
// queue in database/sql (fair, no sleeping) instead of spinning in SQLite's
// busy handler. Other handles and processes still contend through the file
// lock, which busyTimeout covers.
const maxConns = 1

// schema is created on Open. Records are WITHOUT ROWID: the 16-byte key is
// the B-tree key, one lookup per claim. The partial index holds only
// Granted records, so Recover's scan is as small as the unfinished work.
const schema = `
CREATE TABLE IF NOT EXISTS onceproof_records (
	key         BLOB    NOT NULL PRIMARY KEY CHECK (length(key) = 16),
	state       INTEGER NOT NULL CHECK (state IN (1, 2)),
	payload     BLOB,
	lease_until INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS onceproof_records_pending
	ON onceproof_records (lease_until) WHERE state = 1;
CREATE TABLE IF NOT EXISTS onceproof_grants (
	seq     INTEGER PRIMARY KEY,
	key     BLOB    NOT NULL UNIQUE CHECK (length(key) = 16),
	payload BLOB    NOT NULL
);`

// handle is one *sql.DB and its closed flag, shared by a Store and the Sink
// it hands out.
type handle struct {
	db     *sql.DB
	closed atomic.Bool
}

// openHandle opens path with the pragmas every connection needs and creates
// the schema.
func openHandle(path string) (*handle, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file::memory:") || strings.ContainsRune(path, '?') {
		// :memory: would give each pooled connection its own empty database.
		return nil, fmt.Errorf("%w: %q", ErrBadPath, path)
	}
	dsn := fmt.Sprintf("%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate",
		path, busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(0)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: create schema in %s: %w", path, err)
	}
	return &handle{db: db}, nil
}

// check returns the error a call must fail with before touching the
// database, or nil.
func (h *handle) check(ctx context.Context, op string) error {
	if h.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w", op, ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// wrap names op in err. A call that fails because Close ran while it was
// in flight also wraps ref.ErrClosed, like every call after Close.
func (h *handle) wrap(op string, err error) error {
	if h.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w: %w", op, ref.ErrClosed, err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

func (h *handle) close() error {
	if h.closed.Swap(true) {
		return nil
	}
	return h.db.Close()
}

// Store is a ref.PendingStore on one SQLite file. Safe for concurrent use.
type Store struct{ h *handle }

var _ ref.PendingStore = (*Store)(nil)

// Open opens (creating if needed) the database file at path and its schema.
// Every Open of the same path is another handle on the same records.
func Open(path string) (*Store, error) {
	h, err := openHandle(path)
	if err != nil {
		return nil, err
	}
	return &Store{h: h}, nil
}

// Close closes the handle; every later call returns an error wrapping
// ref.ErrClosed. A second Close returns nil.
func (s *Store) Close() error { return s.h.close() }

// DB returns the underlying database, for callers that keep their own tables
// (balances) in the same file.
func (s *Store) DB() *sql.DB { return s.h.db }

// leaseNanos encodes a lease; the zero time is "expired at once", stored as
// the smallest int64 so that every now compares after it.
func leaseNanos(t time.Time) (int64, error) {
	if t.IsZero() {
		return math.MinInt64, nil
	}
	if y := t.Year(); y < 1678 || y > 2261 {
		// UnixNano is undefined outside about 1678-04..2262-04; the whole
		// years inside are safe.
		return 0, fmt.Errorf("%w: %v", ErrLeaseRange, t)
	}
	return t.UnixNano(), nil
}

func leaseTime(n int64) time.Time {
	if n == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// nowNanos encodes Pending's now, clamping instead of failing: every stored
// lease lies inside the range, so a clamped now compares the same way.
func nowNanos(t time.Time) int64 {
	switch y := t.Year(); {
	case y < 1678:
		return math.MinInt64
	case y > 2261:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// Begin implements ref.Store.
func (s *Store) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	if err := s.h.check(ctx, "begin"); err != nil {
		return ref.StateNew, false, err
	}
	lease, err := leaseNanos(c.LeaseUntil)
	if err != nil {
		return ref.StateNew, false, fmt.Errorf("sqlite: begin %v: %w", c.Key, err)
	}
	kb := c.Key.Bytes()
	payload := c.Payload
	if payload == nil {
		payload = []byte{} // a NULL payload is reserved for Delivered records
	}
	res, err := s.h.db.ExecContext(ctx,
		`INSERT INTO onceproof_records (key, state, payload, lease_until) VALUES (?, ?, ?, ?)
		 ON CONFLICT (key) DO NOTHING`,
		kb[:], int64(ref.StateGranted), payload, lease)
	if err != nil {
		return ref.StateNew, false, s.h.wrap(fmt.Sprintf("begin %v", c.Key), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return ref.StateNew, false, s.h.wrap(fmt.Sprintf("begin %v: rows affected", c.Key), err)
	}
	if n == 1 {
		return ref.StateGranted, true, nil
	}
	var st int64
	err = s.h.db.QueryRowContext(ctx, `SELECT state FROM onceproof_records WHERE key = ?`, kb[:]).Scan(&st)
	if err != nil {
		// ErrNoRows cannot happen (records are never deleted); report it
		// as what it would be, a broken database.
		return ref.StateNew, false, s.h.wrap(fmt.Sprintf("begin %v: read recorded state", c.Key), err)
	}
	return ref.State(st), false, nil
}

// Commit implements ref.Store.
func (s *Store) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	if err := s.h.check(ctx, "commit"); err != nil {
		return err
	}
	if st > ref.StateDelivered {
		return fmt.Errorf("sqlite: commit %v: %w: %v", key, ErrBadState, st)
	}
	kb := key.Bytes()
	res, err := s.h.db.ExecContext(ctx,
		`UPDATE onceproof_records SET state = ?1, payload = CASE WHEN ?1 = 2 THEN NULL ELSE payload END
		 WHERE key = ?2 AND state < ?1`,
		int64(st), kb[:])
	if err != nil {
		return s.h.wrap(fmt.Sprintf("commit %v", key), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.h.wrap(fmt.Sprintf("commit %v: rows affected", key), err)
	} else if n == 1 {
		return nil
	}
	// Nothing moved: either the record is already at or past st (a no-op)
	// or there is no record.
	var one int
	err = s.h.db.QueryRowContext(ctx, `SELECT 1 FROM onceproof_records WHERE key = ?`, kb[:]).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: commit %v: %w", key, ref.ErrNotFound)
	}
	if err != nil {
		return s.h.wrap(fmt.Sprintf("commit %v: check existence", key), err)
	}
	return nil
}

// Pending implements ref.PendingStore. limit <= 0 returns no records (SQLite
// reads a negative LIMIT as "no limit", which must not leak through).
func (s *Store) Pending(ctx context.Context, now time.Time, limit int) ([]ref.Record, error) {
	if err := s.h.check(ctx, "pending"); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.h.db.QueryContext(ctx,
		`SELECT key, payload, lease_until FROM onceproof_records
		 WHERE state = 1 AND lease_until <= ? LIMIT ?`,
		nowNanos(now), limit)
	if err != nil {
		return nil, s.h.wrap("pending", err)
	}
	defer rows.Close()
	var out []ref.Record
	for rows.Next() {
		var (
			kb      []byte
			payload []byte
			lease   int64
		)
		if err := rows.Scan(&kb, &payload, &lease); err != nil {
			return nil, s.h.wrap("pending: scan", err)
		}
		if len(kb) != 16 {
			return nil, fmt.Errorf("sqlite: pending: key of %d bytes in the database, want 16", len(kb))
		}
		out = append(out, ref.Record{
			Key:        ref.KeyFromBytes([16]byte(kb)),
			State:      ref.StateGranted,
			Payload:    payload, // Scan into *[]byte copies: the caller owns it
			LeaseUntil: leaseTime(lease),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, s.h.wrap("pending: rows", err)
	}
	return out, nil
}
