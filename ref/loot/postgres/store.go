package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/internal/pgstore"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/internal/delivered"
)

// Errors of Open (wrapped; test with errors.Is). The Store's methods
// return loot's sentinels as the loot.Store contract says; any other error
// means the outcome is unknown.
var (
	// ErrBadOptions: an invalid Options.TestClock.
	ErrBadOptions = errors.New("loot/postgres: invalid options")
	// ErrSchema: a table of Schema exists with other columns.
	ErrSchema = errors.New("loot/postgres: table has an incompatible schema")
)

// Options configures Open. The zero value is the production configuration.
type Options struct {
	// Config, if set, adjusts the pool configuration parsed from the URL
	// (pool size, dialer, TLS, ...) before the pool is created.
	Config func(*pgxpool.Config)
	// TestClock is for tests only: the name of a table holding one row
	// with a timestamptz column "now", which every statement then reads
	// instead of the database's now(). A test moves it with UPDATE, and it
	// stands still in between, so deadlines and leases can be probed to
	// the microsecond (loottest.Harness.Advance). Empty, as it must be in
	// production, means the database's own clock. Open checks that the
	// table holds exactly one row.
	TestClock string
	// Batch coalesces concurrent Claim, BeginSettle and RecordGrants calls
	// on this Store into one statement per kind and batch (batch.go,
	// claimbatch.go): many callers' claims, CASes or closes then cost the
	// database one statement instead of one each. A call with no other of
	// its kind in flight runs as an unbatched one, and so does a batch of
	// one: where calls come one at a time it costs what Batch off does.
	// bench_test.go measures both.
	Batch bool
	_     struct{}
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Store is a loot.Store (and loot.Reader) on PostgreSQL. Safe for
// concurrent use; one Store (one pool) per process, any number of
// processes on one database.
//
// Each Store method is one statement (BeginSettle: one batch of the CAS and
// the frozen claims' read, one implicit transaction): a conditional write
// with status, deadline, lease, fence and membership in its WHERE, never
// read first, returning the row it wrote; only a write that matched nothing
// is followed by a read of the row, to say which guard refused. The claim
// reads the session row FOR SHARE, so it serializes with the CAS's UPDATE;
// RecordGrants closes the session and inserts every grant (one multi-row
// INSERT) and the snapshot in one statement; LeaseGrants is UPDATE ... FROM
// (SELECT ... FOR UPDATE SKIP LOCKED). Every time is the database's now(),
// the transaction's start (queries.go says why); Options.TestClock replaces
// it, in tests only. Options.Batch coalesces concurrent claims and settles
// (batch.go, claimbatch.go).
//
// The caller's duties, beyond loot.Service's:
//
//  1. Run under READ COMMITTED (PostgreSQL's default): the statements rely
//     on a blocked UPDATE re-checking the row it waited for.
//  2. Give the application's role SELECT, INSERT and UPDATE on the six
//     tables; create them from Schema as another role, or let Open create
//     them once with CREATE on the schema.
//  3. Deliver with the Store's Inventory (an Effect puts the item into your
//     own tables in its transaction), or key your own inventory's ledger by
//     loot.Grant.No under a unique constraint.
//  4. Use a loot.Lock (ref/loot/redis) only as an optimisation: the CAS and
//     the fence decide.
type Store struct {
	pool      *pgxpool.Pool
	q         queries
	settles   *coalesce.Lane[settleReq, loot.Frozen]  // nil unless Options.Batch
	records   *coalesce.Lane[recordReq, loot.Session] // nil unless Options.Batch
	claiming  *coalesce.Lane[claimReq, claimed]       // nil unless Options.Batch
	delivers  *coalesce.Lane[[]string, []loot.Grant]  // nil unless Options.Batch
	cancel    context.CancelFunc                      // ends the batches' context
	delivered delivered.Record                        // the Inventory's last batches (ref/loot/internal/delivered)
}

var _ loot.Store = (*Store)(nil)
var _ loot.BatchMarker = (*Store)(nil)

// schemaLock is the advisory lock id under which Open creates the schema:
// arbitrary but fixed, so every process agrees on it.
const schemaLock = 0x100750

// Open connects to the database at url (a postgres:// URL or a libpq
// key=value string), creates what is missing of Schema and returns the
// store. ctx bounds the connecting and the schema setup only. A failed
// schema step is reported by what it was doing ("creating table
// loot_session: ERROR: permission denied for schema public (SQLSTATE
// 42501)").
//
// Use:
//
//	st, err := postgres.Open(ctx, "postgres://app@db/game", postgres.Options{})
//	svc, err := loot.New(loot.Config{Store: st, Inventory: st.Inventory(nil), Fairness: history, Lock: lock})
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return nil, fmt.Errorf("loot/postgres: open: %w", err)
	}
	q := sqlQueries
	if opts.TestClock != "" {
		if !identifier.MatchString(opts.TestClock) {
			return nil, fmt.Errorf("%w: TestClock %q must match %s", ErrBadOptions, opts.TestClock, identifier)
		}
		q = q.withClock("(SELECT now FROM " + opts.TestClock + ")")
	}
	// Generic plans (see pgstore.NewPool): every statement finds its rows by
	// key, and plans_test.go checks that none can be tempted off it.
	pool, err := pgstore.NewPool(ctx, url, opts.Config)
	if err != nil {
		return nil, fmt.Errorf("loot/postgres: open: %w", err)
	}
	if err := pgstore.Create(ctx, pool, schemaLock, pgstore.Steps(Schema), checkColumns); err != nil {
		pool.Close()
		return nil, fmt.Errorf("loot/postgres: open: %w", err)
	}
	if opts.TestClock != "" {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+opts.TestClock).Scan(&n); err != nil || n != 1 {
			pool.Close()
			return nil, fmt.Errorf("%w: TestClock table %s holds %d rows (%v), want exactly one", ErrBadOptions, opts.TestClock, n, err)
		}
	}
	s := &Store{pool: pool, q: q}
	if opts.Batch {
		s.startBatchers()
	}
	return s, nil
}

// Pool returns the store's connection pool (for the caller's own queries on
// the same database).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close stops the batchers and closes the pool; later calls fail. It
// returns nil.
func (s *Store) Close() error {
	if s.cancel != nil {
		s.cancel() // a batch stuck on a dead server must not block Close
		s.settles.Close()
		s.records.Close()
		s.claiming.Close()
		s.delivers.Close()
	}
	s.pool.Close()
	return nil
}

// raceTries bounds the attempts of a call whose write matched no row while
// the read after it says it should have: the row changed between the two
// statements of the batch (for example StartClaiming landed between a
// Claim's INSERT and its read). Rows only move forward through the
// transitions table, at most four steps, so a fifth attempt cannot race.
const raceTries = 5

// errRaced marks an attempt that must be repeated (see raceTries).
var errRaced = errors.New("loot/postgres: the row changed between the write and its read")

// retry runs attempt until it does not report errRaced, at most raceTries
// times; each attempt is a transaction of its own that wrote nothing when
// it reports errRaced.
func retry[T any](ctx context.Context, op string, attempt func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for range raceTries {
		if err = live(ctx); err != nil {
			return v, fmt.Errorf("loot/postgres: %s: %w", op, err)
		}
		v, err = attempt()
		if !errors.Is(err, errRaced) {
			return v, err
		}
	}
	return v, fmt.Errorf("loot/postgres: %s: %w", op, err)
}

// live is ctx.Err(), and loot.CheckContext's refusal of a nil ctx (on
// which ctx.Err() would panic). Every method calls it before the pool
// sees ctx.
func live(ctx context.Context) error {
	if err := loot.CheckContext(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// wrap names the operation on an error that is not one of loot's
// sentinels (those are returned as the guards made them). A data
// exception is loot.ErrBadArgument (see isDataException). Not for the
// batches' statements: there the arguments are many callers', and one's
// bad value is not the others' (batch.go answers them with batchFailed).
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case isDataException(err):
		return fmt.Errorf("loot/postgres: %s: %w: %w", op, loot.ErrBadArgument, err)
	}
	return fmt.Errorf("loot/postgres: %s: %w", op, err)
}

// isDataException reports whether err is PostgreSQL refusing an
// argument's value: SQLSTATE class 22, data exception (22021 a NUL or
// invalid UTF-8 in text, 22003 a number out of range, 22007 and 22008 a
// bad or out-of-range datetime, 22001 a string too long). The statement
// failed and its transaction rolled back: nothing was written, and the
// same arguments would fail again, so this is a definite answer, not an
// unknown outcome. loot.Spec.Normalize and the Service refuse such input
// before it gets here; this is the second line, for a caller of the Store
// itself.
func isDataException(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22")
}

// badArgOnConstraint turns a constraint violation (unique, foreign key,
// check) into loot.ErrBadArgument: the decision or spec broke the schema,
// nothing was written, and repeating it as is cannot help.
func badArgOnConstraint(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505", "23503", "23514":
			return fmt.Errorf("%w: %s (%s)", loot.ErrBadArgument, pe.Message, pe.ConstraintName)
		}
	}
	return err
}

// scanSession reads sessionCols from row.
func scanSession(row pgx.Row) (loot.Session, error) {
	var (
		s       loot.Session
		rule    string
		status  string
		fence   int64
		until   *time.Time
		members []int64
	)
	if err := row.Scan(&s.No, &s.Dungeon, &s.Loot, &s.Quantity, &rule, &s.Deadline, &status, &fence, &s.OpenedAt, &until, &s.Allocated, &members); err != nil {
		return loot.Session{}, err
	}
	s.Rule, s.Status, s.Fence = loot.RuleVersion(rule), loot.Status(status), loot.Fence(fence)
	s.Deadline, s.OpenedAt = utc(s.Deadline), utc(s.OpenedAt)
	if until != nil {
		s.SettleUntil = utc(*until)
	}
	s.Members = fromIDs(members)
	return s, nil
}

// scanGrant reads grantCols (then extra) from row.
func scanGrant(row pgx.Row, extra ...any) (loot.Grant, error) {
	var (
		g      loot.Grant
		player int64
		status string
	)
	dst := append([]any{&g.No, &g.Session, &player, &g.Loot, &g.Quantity, &g.Rank, &status, &g.Attempts, &g.LeaseUntil}, extra...)
	if err := row.Scan(dst...); err != nil {
		return loot.Grant{}, err
	}
	g.Player, g.Status, g.LeaseUntil = loot.PlayerID(player), loot.GrantStatus(status), utc(g.LeaseUntil)
	return g, nil
}

// utc is t as loot keeps times (pgx returns timestamptz in time.Local).
func utc(t time.Time) time.Time { return loot.StoreTime(t) }

func playerIDs(ps []loot.PlayerID) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = int64(p)
	}
	return out
}

// fromIDs converts an array read back; an empty one is nil, as loot.Decide
// leaves a snapshot without winners.
func fromIDs(ids []int64) []loot.PlayerID {
	if len(ids) == 0 {
		return nil
	}
	out := make([]loot.PlayerID, len(ids))
	for i, id := range ids {
		out[i] = loot.PlayerID(id)
	}
	return out
}
