package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/internal/pgstore"
	"github.com/onceproof/onceproof/ref"
)

// Errors this package returns (wrapped; test with errors.Is). Stores also
// return ref.ErrNotFound, ref.ErrClosed and the context's error, and any
// other error means "outcome unknown" as ref.Store documents.
var (
	// ErrBadOptions: Open was given an invalid table name or batch size.
	ErrBadOptions = errors.New("postgres: invalid options")
	// ErrSchema: the table exists with columns this package did not create.
	ErrSchema = errors.New("postgres: table has an incompatible schema")
)

// DefaultTable is the claims table Open uses when Options.Table is empty.
const DefaultTable = "onceproof_claims"

// Options configures Open. The zero value is valid.
type Options struct {
	// Table is the claims table (created if absent); the sink's grant table
	// is Table+"_grants". Lowercase letters, digits and underscores, starting
	// with a letter, at most 48 bytes (PostgreSQL truncates identifiers at
	// 63 bytes and the index name adds a suffix). Default DefaultTable.
	Table string
	// Batch coalesces concurrent Begin, BeginDelivered and Commit calls on
	// this Store into multi-row statements, one round trip per batch. Turn
	// it on where many goroutines call one Store at once, which is where it
	// multiplies throughput; leave it off where calls come one at a time,
	// since a batch of one costs more than a single statement (the server
	// unnests arrays). bench_test.go measures both.
	Batch bool
	// BatchWorkers is how many batches may be in flight at once, each on
	// its own connection (default 1; used only with Batch). While one
	// batch is at the server the next one fills; more workers send batches
	// before they fill, so each is smaller, and each worker is another
	// backend competing with the callers for the database host's cores.
	// The default is 1 because a second worker gains little on an idle
	// database host and loses more on a busy one (BenchmarkSettle's doc
	// has the measurements). Raise it where the database host has cores to
	// spare, after measuring with BenchmarkSettle -pgworkers.
	BatchWorkers int
	// MaxBatch bounds the rows of one batched statement (default 256: big
	// enough that 64 concurrent callers fit in one batch, small enough that
	// one statement's arrays stay a few kilobytes).
	MaxBatch int
	// Config, if set, adjusts the pool configuration parsed from the URL
	// before the pool is created (pool size, dialer, TLS, ...).
	Config func(*pgxpool.Config)
	_      struct{}
}

var tableName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

// Store is a ref.PendingStore on a PostgreSQL table. Safe for concurrent use;
// one Store (one pool) per process is the intended use, and any number of
// processes may share the table.
//
// The claims table (Options.Table) is keyed by the full 128-bit ref.Key
// (bytea PRIMARY KEY: a 64-bit fingerprint collision is two rows, never a
// lost settlement). Begin is INSERT ... ON CONFLICT DO NOTHING, so the
// claim is atomic across every node; Commit is an UPDATE guarded by
// state < new, so states only move forward; Pending reads the partial index
// of Granted rows by lease. Options.Batch coalesces concurrent calls into
// multi-row statements, one round trip per batch.
type Store struct {
	pool   *pgxpool.Pool
	table  string
	q      queries
	closed atomic.Bool
	batch  *coalesce.Batcher[op, opResult] // nil unless Options.Batch
	cancel context.CancelFunc              // ends the batches' context
}

var (
	_ ref.PendingStore     = (*Store)(nil)
	_ ref.DeliveredClaimer = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a libpq
// key=value string), creates what is missing of Schema, and returns the
// store. ctx bounds only the connecting and the schema setup. A failed
// step is reported by what it was doing ("creating table x: ERROR:
// permission denied for schema public (SQLSTATE 42501)").
//
// Use:
//
//	st, err := postgres.Open(ctx, "postgres://user@host/db", postgres.Options{Batch: true})
//	sink := st.Sink(func(ctx context.Context, tx pgx.Tx, key ref.Key, payload []byte) error {
//		_, err := tx.Exec(ctx, "UPDATE wallet SET coins = coins + $2 WHERE player = $1", ...)
//		return err
//	})
//	settler := ref.NewSettler(ref.NewWindow(ttl, shards), st, ref.WithSink(sink))
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Table == "" {
		opts.Table = DefaultTable
	}
	if !tableName.MatchString(opts.Table) {
		return nil, fmt.Errorf("%w: table %q must match %s", ErrBadOptions, opts.Table, tableName)
	}
	if opts.BatchWorkers == 0 {
		opts.BatchWorkers = 1
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 256
	}
	if opts.BatchWorkers < 1 || opts.MaxBatch < 1 {
		return nil, fmt.Errorf("%w: BatchWorkers %d and MaxBatch %d must be positive",
			ErrBadOptions, opts.BatchWorkers, opts.MaxBatch)
	}
	// Generic plans (see pgstore.NewPool): every statement here looks rows
	// up by primary key or the pending index.
	pool, err := pgstore.NewPool(ctx, url, opts.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s := &Store{pool: pool, table: opts.Table, q: newQueries(opts.Table)}
	if err := s.createSchema(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if opts.Batch {
		// Batches run under the store's lifetime, not a per-batch
		// timeout: a context.WithTimeout per batch measured 450us vs
		// 200us per batched Begin at concurrency 1, and callers return
		// on their own contexts anyway. Close cancels it.
		life, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		bctx := func() (context.Context, context.CancelFunc) {
			return life, func() {}
		}
		copts := coalesce.Options{Workers: opts.BatchWorkers, MaxBatch: opts.MaxBatch, Context: bctx}
		s.batch = coalesce.New(s.runBatch, copts)
	}
	return s, nil
}

// createSchema creates what is missing of Schema (internal/pgstore: each
// object is looked up first, so a role given only SELECT, INSERT and UPDATE
// on tables made for it can still Open). Errors name the step, not its SQL.
func (s *Store) createSchema(ctx context.Context) error {
	// The lock id is arbitrary but fixed: every onceproof process agrees on it.
	if err := pgstore.Create(ctx, s.pool, 7262113, s.q.schema, s.checkSchema); err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	return nil
}

// checkSchema refuses a pre-existing table whose columns differ from ours
// (CREATE TABLE IF NOT EXISTS would silently accept it); a missing table is
// created afterwards.
func (s *Store) checkSchema(ctx context.Context, tx pgx.Tx) error {
	want := map[string]string{"key": "bytea", "state": "smallint", "payload": "bytea", "lease": "timestamp with time zone"}
	rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, s.table)
	if err != nil {
		return fmt.Errorf("postgres: open: checking the columns of %s: %w", s.table, err)
	}
	got := map[string]string{}
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			return fmt.Errorf("postgres: open: checking the columns of %s: %w", s.table, err)
		}
		got[n] = t
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: open: checking the columns of %s: %w", s.table, err)
	}
	if len(got) == 0 {
		return nil
	}
	for n, t := range want {
		if got[n] != t {
			return fmt.Errorf("%w: %s.%s is %q, want %q", ErrSchema, s.table, n, got[n], t)
		}
	}
	return nil
}

// Pool returns the store's connection pool (for the caller's own queries in
// the same database, such as the balance a Sink credits).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Table returns the claims table's name.
func (s *Store) Table() string { return s.table }

// Close stops the batchers and closes the pool. Later calls return
// ref.ErrClosed. Close is idempotent and always returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.batch != nil {
		s.cancel() // a batch stuck on a dead server must not block Close
		s.batch.Close()
	}
	s.pool.Close()
	return nil
}

// wrap names the operation, and turns the errors of a store being closed
// (pool closed, batcher closed) into ref.ErrClosed.
func (s *Store) wrap(op string, err error) error {
	if errors.Is(err, ref.ErrClosed) {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	if errors.Is(err, coalesce.ErrClosed) || s.closed.Load() && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("postgres: %s: %w", op, ref.ErrClosed)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}
