package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/impls/loot/seedverbatim"
	lootmysql "github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
	lootpg "github.com/onceproof/onceproof/ref/loot/postgres"

	gomysql "github.com/go-sql-driver/mysql"
)

// lootStoreForms is the loot subject's -store help and bad-input list.
const lootStoreForms = "postgres://user:pass@host:port/db or postgresql://... (one schema per parallel run), " +
	"mysql://user:pass@host:port/db (one database per parallel run)"

// clockTable is the one-row table a loot run's store reads "now" from
// (ref/loot's test clock): the world's database clock, moved to the
// virtual time of every store call before it runs.
const clockTable = "onceproof_clock"

// lootSlot is the durable state of one loot run on a real server: a
// PostgreSQL schema or a MySQL database holding ref/loot's tables and the
// clock table, and the store open on it. A slot serves one run at a time;
// the run's Close empties its tables and hands it to the next run, so every
// run starts from empty tables without paying a schema's creation (tens of
// milliseconds) each time.
type lootSlot struct {
	// cluster is the row's cluster on the slot, its database clock db.
	cluster func(db lootfaults.Clock) lootfaults.Cluster
	empty   func(ctx context.Context) error
	drop    func(ctx context.Context) error // closes the store and removes the schema or database
	// locks is the slot's lock service on -lock's Redis (nil: the world's
	// model), emptied and closed with the slot.
	locks *redisLocks
}

// memorySlots opens slots for the row d in memory: its own cluster, for
// -lock without -store (the lock service is the slot's only real part).
func memorySlots(d lootfaults.Design) lootOpener {
	return func(context.Context, int) (*lootSlot, error) {
		none := func(context.Context) error { return nil }
		return &lootSlot{cluster: d.NewCluster, empty: none, drop: none}, nil
	}
}

// withLocks gives every slot of open a lock service on the Redis server at
// url: key prefix onceproof:loot:<tag>:<k>: for slot k.
func withLocks(open lootOpener, url, tag string) lootOpener {
	return func(ctx context.Context, k int) (*lootSlot, error) {
		s, err := open(ctx, k)
		if err != nil {
			return nil, err
		}
		locks, err := openRedisLocks(ctx, url, fmt.Sprintf("onceproof:loot:%s:%d:", tag, k))
		if err != nil {
			return nil, errors.Join(lockError{err}, cleanup(s.drop))
		}
		// Keys a killed process left under this prefix (a tag repeats
		// only by chance, but a slot must start empty).
		if err := locks.empty(ctx); err != nil {
			return nil, errors.Join(lockError{err}, cleanup(locks.close), cleanup(s.drop))
		}
		empty, drop := s.empty, s.drop
		s.locks = locks
		s.empty = func(ctx context.Context) error { return errors.Join(empty(ctx), locks.empty(ctx)) }
		s.drop = func(ctx context.Context) error { return errors.Join(locks.close(ctx), drop(ctx)) }
		return s, nil
	}
}

// refSlot is loot-ref's cluster on st, whose test clock setClock moves
// to the world's database time before every store call.
func refSlot(st lootref.Store, setClock func(context.Context, time.Time) error) func(lootfaults.Clock) lootfaults.Cluster {
	return func(db lootfaults.Clock) lootfaults.Cluster {
		return lootref.NewCluster(st, func(ctx context.Context) error { return setClock(ctx, db.Now()) })
	}
}

// lootOpener creates slot number k (0, 1, ...; as many as runs in flight).
type lootOpener func(ctx context.Context, k int) (*lootSlot, error)

// LootStoreDesign is a loot row on a real database: loot-ref (the same
// Service, world lock and inventory as in memory, with ref/loot's
// PostgreSQL or MySQL store under it) or loot-seed-verbatim (the
// document's tables and verbatim SQL on MySQL or MariaDB), the database's
// clock the world's (moved before every statement). Every store call is
// still one Env call, so faults land where they do in memory and the
// verdicts must be the in-memory row's: a cell that differs is the
// database behaving otherwise than the in-memory model of it.
//
// Failures to open, empty or drop a slot are not verdicts: Err returns them
// and the command writes nothing when there are any.
type LootStoreDesign struct {
	runBook
	base lootfaults.Design // the in-memory row: its declaration, and a failed slot's stand-in
	name string
	db   string // the database's kind (postgres, mysql), "" for the row's in-memory store
	lock bool   // the lock service is a real Redis (-lock)
	open lootOpener

	smu  sync.Mutex
	free []*lootSlot
	all  []*lootSlot
}

var _ engine.Declarer = (*LootStoreDesign)(nil)

// Name implements lootfaults.Design: "loot-ref@postgres", "loot-ref@mysql"
// or "loot-seed-verbatim@mysql".
func (d *LootStoreDesign) Name() string { return d.name }

// Declare implements engine.Declarer: the in-memory row's declaration
// (the database and the lock service keep the contracts the in-memory
// models assume, or the cells differ).
func (d *LootStoreDesign) Declare() engine.Declaration {
	decl := engine.DeclarationOf(d.base)
	if d.db != "" {
		decl.Doc += " This row runs it on a real database (" + d.db + "), emptied before every run, its clock the world's database clock, every call still through the fault-injecting environment."
	}
	if d.lock {
		decl.Doc += " Its lock service is a real Redis (ref/loot/redis's Lock: SET NX PX, the compare-and-delete script; GET and DEL), one key prefix per run in flight, emptied before every run; a key's ttl ends by the world's lock clock (the key is deleted before the first call at or past its end), every call still through the fault-injecting environment."
	}
	return decl
}

// NewCluster implements lootfaults.Design: a slot's store, its clock moved
// to db's time before every call.
func (d *LootStoreDesign) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	run := d.start()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	slot, err := d.acquire(ctx)
	if err != nil {
		d.fail(fmt.Errorf("%s: opening the database of run %d: %w", d.name, run, err))
		// The run goes on in memory so the harness need not stop; its
		// verdict is never written: Err reports the failure first.
		return &lootStoreCluster{Cluster: d.base.NewCluster(db), d: d}
	}
	if slot.locks != nil {
		slot.locks.fail = d.fail
	}
	return &lootStoreCluster{Cluster: slot.cluster(db), d: d, slot: slot}
}

// acquire returns a free slot, or a new one.
func (d *LootStoreDesign) acquire(ctx context.Context) (*lootSlot, error) {
	d.smu.Lock()
	if n := len(d.free); n > 0 {
		s := d.free[n-1]
		d.free = d.free[:n-1]
		d.smu.Unlock()
		return s, nil
	}
	k := len(d.all)
	d.all = append(d.all, nil) // reserve k while opening without the lock
	d.smu.Unlock()
	s, err := d.open(ctx, k)
	d.smu.Lock()
	defer d.smu.Unlock()
	if err != nil {
		return nil, err
	}
	d.all[k] = s
	return s, nil
}

// release empties s and makes it free; a slot that cannot be emptied is
// never used again (Done still drops it).
func (d *LootStoreDesign) release(s *lootSlot) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.empty(ctx); err != nil {
		return err
	}
	d.smu.Lock()
	defer d.smu.Unlock()
	d.free = append(d.free, s)
	return nil
}

// Probe opens a slot under ctx before the matrix and frees it: a database
// that cannot be used fails here, at once and with its cause.
func (d *LootStoreDesign) Probe(ctx context.Context) error {
	d.probe()
	s, err := d.acquire(ctx)
	if err != nil {
		return err
	}
	return d.release(s)
}

// Done closes every slot and removes its schema or database; the command
// calls it after the matrix, interrupted or not.
func (d *LootStoreDesign) Done() error {
	d.smu.Lock()
	defer d.smu.Unlock()
	var errs []error
	for _, s := range d.all {
		if s == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		errs = append(errs, s.drop(ctx))
		cancel()
	}
	d.all, d.free = nil, nil
	return errors.Join(errs...)
}

// lootStoreCluster is one run's cluster on a slot.
type lootStoreCluster struct {
	lootfaults.Cluster
	d    *LootStoreDesign
	slot *lootSlot // nil: the slot did not open
	once sync.Once
}

var (
	_ lootfaults.ClusterCloser = (*lootStoreCluster)(nil)
	_ lootfaults.LockCluster   = (*lootStoreCluster)(nil)
)

// LockService implements lootfaults.LockCluster: the slot's Redis with
// -lock, else the world's model.
func (c *lootStoreCluster) LockService() lootfaults.LockService {
	if c.slot == nil || c.slot.locks == nil {
		return nil
	}
	return c.slot.locks
}

// Close implements lootfaults.ClusterCloser: the slot is emptied and freed.
func (c *lootStoreCluster) Close() {
	c.once.Do(func() {
		if c.slot != nil {
			if err := c.d.release(c.slot); err != nil {
				c.d.fail(fmt.Errorf("%s: emptying a run's database: %w", c.d.name, err))
			}
		}
		c.d.end()
	})
}

// postgresLootSlots opens slots on the PostgreSQL server at url: schema
// onceproof_loot_<tag>_<k>, the pool's search_path set to it alone.
func postgresLootSlots(url, tag string) lootOpener {
	return func(ctx context.Context, k int) (*lootSlot, error) {
		schema := fmt.Sprintf("onceproof_loot_%s_%d", tag, k)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return nil, err
		}
		_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+"."+clockTable+
			" (now timestamptz NOT NULL); INSERT INTO "+schema+"."+clockTable+" VALUES (now())")
		conn.Close(ctx)
		if err != nil {
			return nil, err
		}
		dropSchema := func(ctx context.Context) error {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			return err
		}
		st, err := lootpg.Open(ctx, url, lootpg.Options{TestClock: clockTable, Config: func(c *pgxpool.Config) {
			c.ConnConfig.RuntimeParams["search_path"] = schema
		}})
		if err != nil {
			return nil, errors.Join(err, cleanup(dropSchema))
		}
		pool := st.Pool()
		var tables []string
		rows, err := pool.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> $2 ORDER BY tablename", schema, clockTable)
		if err == nil {
			tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			st.Close()
			return nil, errors.Join(err, cleanup(dropSchema))
		}
		// One statement for every table: it handles their foreign keys,
		// and RESTART IDENTITY makes every run's ids start where the
		// first run's did.
		truncate := "TRUNCATE " + strings.Join(tables, ", ") + " RESTART IDENTITY"
		return &lootSlot{
			cluster: refSlot(st, func(ctx context.Context, now time.Time) error {
				_, err := pool.Exec(ctx, "UPDATE "+clockTable+" SET now = $1", now)
				return err
			}),
			empty: func(ctx context.Context) error {
				_, err := pool.Exec(ctx, truncate)
				return err
			},
			drop: func(ctx context.Context) error {
				st.Close()
				return dropSchema(ctx)
			},
		}, nil
	}
}

// mysqlLootSlots opens slots on the MySQL or MariaDB server of dsn:
// database onceproof_loot_<tag>_<k> (the account needs CREATE and DROP).
func mysqlLootSlots(dsn, tag string) lootOpener {
	return func(ctx context.Context, k int) (*lootSlot, error) {
		run, dropDB, err := mysqlDatabase(ctx, dsn, fmt.Sprintf("onceproof_loot_%s_%d", tag, k))
		if err != nil {
			return nil, err
		}
		st, err := lootmysql.Open(ctx, run.FormatDSN(), lootmysql.Options{ClockTable: clockTable})
		if err != nil {
			return nil, errors.Join(err, cleanup(dropDB))
		}
		db := st.DB()
		var tables []string
		err = func() error {
			if _, err := db.ExecContext(ctx, "CREATE TABLE "+clockTable+" (at DATETIME(6) NOT NULL)"); err != nil {
				return err
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO "+clockTable+" VALUES (NOW(6))"); err != nil {
				return err
			}
			rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name <> ? ORDER BY table_name", clockTable)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var t string
				if err := rows.Scan(&t); err != nil {
					return err
				}
				tables = append(tables, t)
			}
			return rows.Err()
		}()
		if err != nil {
			st.Close()
			return nil, errors.Join(err, cleanup(dropDB))
		}
		return &lootSlot{
			cluster: refSlot(st, func(ctx context.Context, now time.Time) error {
				_, err := db.ExecContext(ctx, "UPDATE "+clockTable+" SET at = ?", now.UTC())
				return err
			}),
			empty: truncateAll(db, tables),
			drop: func(ctx context.Context) error {
				return errors.Join(st.Close(), dropDB(ctx))
			},
		}, nil
	}
}

// mysqlDocSlots opens slots for loot-seed-verbatim on the MySQL or MariaDB
// server of dsn: database onceproof_doc_<tag>_<k> holding the document's
// schema.sql (docsql.Schema), its clock each statement's connection
// timestamp (seedverbatim.SQLTables).
func mysqlDocSlots(dsn, tag string) lootOpener {
	return func(ctx context.Context, k int) (*lootSlot, error) {
		run, dropDB, err := mysqlDatabase(ctx, dsn, fmt.Sprintf("onceproof_doc_%s_%d", tag, k))
		if err != nil {
			return nil, err
		}
		run.ParseTime, run.Loc = true, time.UTC
		if run.Params == nil {
			run.Params = map[string]string{}
		}
		run.Params["time_zone"] = "'+00:00'"
		conn, err := gomysql.NewConnector(run)
		if err != nil {
			return nil, errors.Join(err, cleanup(dropDB))
		}
		db := sql.OpenDB(conn)
		if err := docsql.New(db).CreateSchema(ctx); err != nil {
			db.Close()
			return nil, errors.Join(err, cleanup(dropDB))
		}
		return &lootSlot{
			cluster: func(clock lootfaults.Clock) lootfaults.Cluster {
				return seedverbatim.NewCluster(seedverbatim.SQLTables(db, clock.Now))
			},
			empty: truncateAll(db, []string{"loot_grant", "loot_intent", "loot_session"}),
			drop: func(ctx context.Context) error {
				return errors.Join(db.Close(), dropDB(ctx))
			},
		}, nil
	}
}

// truncateAll empties tables: TRUNCATE, not DELETE, so AUTO_INCREMENT
// restarts too and every run's ids (and row order) start where the first
// run's did. Neither schema has foreign keys.
func truncateAll(db *sql.DB, tables []string) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, t := range tables {
			if _, err := db.ExecContext(ctx, "TRUNCATE TABLE "+t); err != nil {
				return err
			}
		}
		return nil
	}
}

// mysqlDatabase creates database name on the server of dsn and returns
// the driver configuration for it and drop, which removes it.
func mysqlDatabase(ctx context.Context, dsn, name string) (*gomysql.Config, func(context.Context) error, error) {
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	if err := mysqlExec(ctx, cfg, "CREATE DATABASE "+name); err != nil {
		return nil, nil, err
	}
	drop := func(ctx context.Context) error { return mysqlExec(ctx, cfg, "DROP DATABASE IF EXISTS "+name) }
	run := cfg.Clone()
	run.DBName = name
	return run, drop, nil
}

// cleanup runs drop under a context of its own: the open it undoes may
// have failed because its context ended (an interrupt), which must not
// leave the schema or database behind.
func cleanup(drop func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return drop(ctx)
}

// mysqlExec runs one statement on a connection of its own to the server of
// cfg (in cfg's database, which the statement need not use).
func mysqlExec(ctx context.Context, cfg *gomysql.Config, stmt string) error {
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// lootStores is the loot rows of one `matrix -subject loot -store`, as
// the command reports them (storeRows).
type lootStores []*LootStoreDesign

// Name is the rows' names, joined by "+".
func (ds lootStores) Name() string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name()
	}
	return strings.Join(names, "+")
}

// Runs is the runs (and probes) of every row.
func (ds lootStores) Runs() (n int) {
	for _, d := range ds {
		n += d.Runs()
	}
	return n
}

// Live is the runs of every row still open.
func (ds lootStores) Live() (n int) {
	for _, d := range ds {
		n += d.Live()
	}
	return n
}

// Err is every row's store failures.
func (ds lootStores) Err() error {
	var errs []error
	for _, d := range ds {
		errs = append(errs, d.Err())
	}
	return errors.Join(errs...)
}

// Done drops every row's schemas or databases.
func (ds lootStores) Done() error {
	var errs []error
	for _, d := range ds {
		errs = append(errs, d.Done())
	}
	return errors.Join(errs...)
}

// designs is the rows as the matrix takes them.
func (ds lootStores) designs() []lootfaults.Design {
	out := make([]lootfaults.Design, len(ds))
	for i, d := range ds {
		out[i] = d
	}
	return out
}
