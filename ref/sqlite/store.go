// Package sqlite is the embedded durable Store and Sink of ref, on a SQLite
// file through the pure-Go driver modernc.org/sqlite (no cgo).
//
// Store (Open) keeps one row per claimed request, keyed by the full 128-bit
// ref.Key as a 16-byte BLOB PRIMARY KEY, so a 64-bit fingerprint collision
// is two rows, never a lost settlement. Sink (OpenSink, or Store.Sink for the
// atomic form) keeps the ledger of applied grants under a UNIQUE grant key
// and runs the caller's Effect (the credit) in the same transaction, so a
// credit and its grant key survive a crash together or not at all.
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

	"github.com/onceproof/onceproof/internal/coalesce"
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
	// ErrBadOptions: OpenWith with invalid Options.
	ErrBadOptions = errors.New("sqlite: invalid options")
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

// schema is created on Open, step by step so that an error names the step
// (not the SQL). Records are WITHOUT ROWID: the 16-byte key is the B-tree
// key, one lookup per claim. The partial index holds only Granted records,
// so Recover's scan is as small as the unfinished work.
var schema = []struct{ what, sql string }{
	{"creating table onceproof_records", `CREATE TABLE IF NOT EXISTS onceproof_records (
		key         BLOB    NOT NULL PRIMARY KEY CHECK (length(key) = 16),
		state       INTEGER NOT NULL CHECK (state IN (1, 2)),
		payload     BLOB,
		lease_until INTEGER NOT NULL
	) WITHOUT ROWID`},
	{"creating index onceproof_records_pending", `CREATE INDEX IF NOT EXISTS onceproof_records_pending
		ON onceproof_records (lease_until) WHERE state = 1`},
	{"creating table onceproof_grants", `CREATE TABLE IF NOT EXISTS onceproof_grants (
		seq     INTEGER PRIMARY KEY,
		key     BLOB    NOT NULL UNIQUE CHECK (length(key) = 16),
		payload BLOB    NOT NULL
	)`},
}

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
	// sql.Open connects lazily: connect first, so that a file that cannot
	// be opened is not reported as a schema step.
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	for _, step := range schema {
		if _, err := db.Exec(step.sql); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlite: open %s: %s: %w", path, step.what, err)
		}
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
//
// Its contract choices, beyond ref.Store's:
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
//     ErrBadState, ErrBadPath, ErrBadOptions; a cancelled context returns
//     an error wrapping ctx.Err(). Any other error is "outcome unknown" in
//     ref's sense.
//   - Several Stores (processes, nodes) may open one file: SQLite's file
//     locks serialise writers, each waiting up to 10s for the lock.
type Store struct {
	h       *handle
	begins  *coalesce.Batcher[beginReq, beginRes]  // nil unless Options.Batch
	commits *coalesce.Batcher[commitReq, struct{}] // nil unless Options.Batch
}

var (
	_ ref.PendingStore     = (*Store)(nil)
	_ ref.DeliveredClaimer = (*Store)(nil)
)

// Options configures OpenWith. The zero value is Open's behaviour.
type Options struct {
	// Batch coalesces this handle's concurrent Begin calls into one
	// transaction, and its Commit calls into another: SQLite pays one WAL
	// fsync per transaction, so under concurrency a batch of n claims costs
	// about what one did. At concurrency 1 a batch holds one call and adds
	// one channel hand-off (well under a microsecond) to a write that takes
	// hundreds. Each call's answer is the same as unbatched; a failed batch
	// fails every call in it ("outcome unknown", as for one call).
	Batch bool
	// MaxBatch bounds the calls of one batch (default 128: above the 64
	// concurrent callers the suite and benchmarks use, so a burst is one
	// transaction, while one batch's write lock is held for milliseconds,
	// not seconds).
	MaxBatch int
	_        struct{}
}

// batchTimeout bounds one batch transaction, which runs for many callers
// and so under none of their contexts (a caller whose context ends stops
// waiting at once; its call's outcome is then unknown). 30s: three
// busyTimeouts, so a batch fails only when the file is wedged.
const batchTimeout = 3 * busyTimeout

// Open opens (creating if needed) the database file at path and its schema.
// Every Open of the same path is another handle on the same records.
func Open(path string) (*Store, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*Store, error) {
	if o.MaxBatch == 0 {
		o.MaxBatch = 128
	}
	if o.MaxBatch < 1 {
		return nil, fmt.Errorf("%w: MaxBatch %d, want >= 1", ErrBadOptions, o.MaxBatch)
	}
	h, err := openHandle(path)
	if err != nil {
		return nil, err
	}
	s := &Store{h: h}
	if o.Batch {
		// One worker: SQLite admits one writer, so a second batch in flight
		// would only wait for the first's lock; meanwhile the next batch
		// fills in the queue.
		co := coalesce.Options{Workers: 1, MaxBatch: o.MaxBatch, Context: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), batchTimeout)
		}}
		s.begins = coalesce.New(s.beginBatch, co)
		s.commits = coalesce.New(s.commitBatch, co)
	}
	return s, nil
}

// Close closes the handle; every later call returns an error wrapping
// ref.ErrClosed. A second Close returns nil.
func (s *Store) Close() error {
	if s.begins != nil {
		s.begins.Close()
		s.commits.Close()
	}
	return s.h.close()
}

// DB returns the underlying database, for callers that keep their own tables
// (balances) in the same file. The handle has one connection: do not call
// the Store while holding a transaction of DB, or both wait for each other.
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

// The statements of Begin and Commit, shared by the single and batched
// paths. They run in autocommit mode singly and inside one IMMEDIATE
// transaction batched; either way every answer is a state the record had.
const (
	sqlClaim = `INSERT INTO onceproof_records (key, state, payload, lease_until) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO NOTHING`
	sqlState   = `SELECT state FROM onceproof_records WHERE key = ?`
	sqlAdvance = `UPDATE onceproof_records SET state = ?1, payload = CASE WHEN ?1 = 2 THEN NULL ELSE payload END
		WHERE key = ?2 AND state < ?1`
	sqlExists = `SELECT 1 FROM onceproof_records WHERE key = ?`
)

// execer is what the single path (*sql.DB) and a batch (*sql.Tx) share.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type beginReq struct {
	key     ref.Key
	born    ref.State // the state a created record starts in
	payload []byte    // nil (NULL) when born Delivered
	lease   int64
}

type beginRes struct {
	st      ref.State
	created bool
}

type commitReq struct {
	key ref.Key
	st  ref.State
}

// Begin implements ref.Store.
func (s *Store) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	return s.claim(ctx, "begin", c, ref.StateGranted)
}

// BeginDelivered implements ref.DeliveredClaimer: Begin's one INSERT ... ON
// CONFLICT (batched too), with the record born Delivered and no payload (as
// Commit leaves a Delivered record), so the seed-form Settle writes once.
func (s *Store) BeginDelivered(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	return s.claim(ctx, "begin delivered", c, ref.StateDelivered)
}

func (s *Store) claim(ctx context.Context, name string, c ref.Claim, born ref.State) (ref.State, bool, error) {
	if err := s.h.check(ctx, name); err != nil {
		return ref.StateNew, false, err
	}
	lease, err := leaseNanos(c.LeaseUntil)
	if err != nil {
		return ref.StateNew, false, fmt.Errorf("sqlite: %s %v: %w", name, c.Key, err)
	}
	payload := c.Payload
	switch {
	case born == ref.StateDelivered:
		payload = nil
	case payload == nil:
		payload = []byte{} // a NULL payload is reserved for Delivered records
	}
	q := beginReq{key: c.Key, born: born, payload: payload, lease: lease}
	var r beginRes
	if s.begins != nil {
		// The batch runs after Begin could return (on ctx), so it must own
		// the payload: copy it now, the caller may reuse its slice.
		if payload != nil {
			q.payload = append([]byte{}, payload...)
		}
		r, err = s.begins.Do(ctx, q)
	} else {
		r, err = claim(ctx, s.h.db, q)
	}
	if err != nil {
		return ref.StateNew, false, s.wrapBatch(fmt.Sprintf("%s %v", name, c.Key), err)
	}
	return r.st, r.created, nil
}

// claim is one Begin on ex.
func claim(ctx context.Context, ex execer, q beginReq) (beginRes, error) {
	kb := q.key.Bytes()
	res, err := ex.ExecContext(ctx, sqlClaim, kb[:], int64(q.born), q.payload, q.lease)
	if err != nil {
		return beginRes{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return beginRes{}, fmt.Errorf("rows affected: %w", err)
	}
	if n == 1 {
		return beginRes{st: q.born, created: true}, nil
	}
	var st int64
	if err := ex.QueryRowContext(ctx, sqlState, kb[:]).Scan(&st); err != nil {
		// ErrNoRows cannot happen (records are never deleted); report it
		// as what it would be, a broken database.
		return beginRes{}, fmt.Errorf("read recorded state: %w", err)
	}
	return beginRes{st: ref.State(st)}, nil
}

// Commit implements ref.Store.
func (s *Store) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	if err := s.h.check(ctx, "commit"); err != nil {
		return err
	}
	if st > ref.StateDelivered {
		return fmt.Errorf("sqlite: commit %v: %w: %v", key, ErrBadState, st)
	}
	var err error
	if s.commits != nil {
		_, err = s.commits.Do(ctx, commitReq{key: key, st: st})
	} else {
		err = advance(ctx, s.h.db, commitReq{key: key, st: st})
	}
	if err != nil {
		if errors.Is(err, ref.ErrNotFound) {
			return fmt.Errorf("sqlite: commit %v: %w", key, err)
		}
		return s.wrapBatch(fmt.Sprintf("commit %v", key), err)
	}
	return nil
}

// advance is one Commit on ex.
func advance(ctx context.Context, ex execer, q commitReq) error {
	kb := q.key.Bytes()
	res, err := ex.ExecContext(ctx, sqlAdvance, int64(q.st), kb[:])
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("rows affected: %w", err)
	} else if n == 1 {
		return nil
	}
	// Nothing moved: either the record is already at or past st (a no-op)
	// or there is no record.
	var one int
	err = ex.QueryRowContext(ctx, sqlExists, kb[:]).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ref.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("check existence: %w", err)
	}
	return nil
}

// wrapBatch is handle.wrap that also reads the batcher's own closed error
// as ref.ErrClosed.
func (s *Store) wrapBatch(op string, err error) error {
	if errors.Is(err, coalesce.ErrClosed) {
		return fmt.Errorf("sqlite: %s: %w: %w", op, ref.ErrClosed, err)
	}
	return s.h.wrap(op, err)
}

// inBatch runs fn for a batch inside one IMMEDIATE transaction and answers
// every request with fn's per-request error, or with the batch's error when
// the transaction as a whole failed (nothing it did is then known to have
// landed: "outcome unknown" for every call in it).
func inBatch[Q, R any](ctx context.Context, h *handle, qs []Q, rs []coalesce.Result[R], fn func(tx *sql.Tx, q Q) (R, error)) {
	fail := func(err error) {
		for i := range rs {
			rs[i] = coalesce.Result[R]{Err: err}
		}
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("batch of %d: begin: %w", len(qs), err))
		return
	}
	for i, q := range qs {
		v, err := fn(tx, q)
		if err != nil && !errors.Is(err, ref.ErrNotFound) {
			// A statement failed: the transaction's state is unknown to
			// us, so roll it all back rather than commit a partial batch.
			tx.Rollback()
			fail(fmt.Errorf("batch of %d: %w", len(qs), err))
			return
		}
		rs[i] = coalesce.Result[R]{Val: v, Err: err}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("batch of %d: commit: %w", len(qs), err))
	}
}

func (s *Store) beginBatch(ctx context.Context, qs []beginReq, rs []coalesce.Result[beginRes]) {
	inBatch(ctx, s.h, qs, rs, func(tx *sql.Tx, q beginReq) (beginRes, error) { return claim(ctx, tx, q) })
}

func (s *Store) commitBatch(ctx context.Context, qs []commitReq, rs []coalesce.Result[struct{}]) {
	inBatch(ctx, s.h, qs, rs, func(tx *sql.Tx, q commitReq) (struct{}, error) { return struct{}{}, advance(ctx, tx, q) })
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
