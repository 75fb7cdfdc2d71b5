package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
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

// memorySlots opens slots for the row d in memory: its own cluster, for
// -lock without -store (the lock service is the slot's only real part).
func memorySlots(d lootfaults.Design) lootref.Opener {
	return func(context.Context, int) (*lootref.Slot, error) {
		none := func(context.Context) error { return nil }
		return &lootref.Slot{Cluster: d.NewCluster, Empty: none, Drop: none}, nil
	}
}

// withLocks gives every slot of open a lock service on the Redis server at
// url: key prefix onceproof:loot:<tag>:<k>: for slot k.
func withLocks(open lootref.Opener, url, tag string) lootref.Opener {
	return func(ctx context.Context, k int) (*lootref.Slot, error) {
		s, err := open(ctx, k)
		if err != nil {
			return nil, err
		}
		locks, err := openRedisLocks(ctx, url, fmt.Sprintf("onceproof:loot:%s:%d:", tag, k))
		if err != nil {
			return nil, errors.Join(lockError{err}, cleanup(s.Drop))
		}
		// Keys a killed process left under this prefix (a tag repeats
		// only by chance, but a slot must start empty).
		if err := locks.empty(ctx); err != nil {
			return nil, errors.Join(lockError{err}, cleanup(locks.close), cleanup(s.Drop))
		}
		empty, drop := s.Empty, s.Drop
		s.Locks = locks
		s.Empty = func(ctx context.Context) error { return errors.Join(empty(ctx), locks.empty(ctx)) }
		s.Drop = func(ctx context.Context) error { return errors.Join(locks.close(ctx), drop(ctx)) }
		return s, nil
	}
}

// postgresLootSlots opens slots on the PostgreSQL server at url: schema
// onceproof_loot_<tag>_<k>, the pool's search_path set to it alone.
func postgresLootSlots(url, tag string) lootref.Opener {
	return func(ctx context.Context, k int) (*lootref.Slot, error) {
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
		// Batch: the store as lootd serves it (-db-coalesce's default), so
		// the matrix judges the coalescing paths too.
		st, err := lootpg.Open(ctx, url, lootpg.Options{TestClock: clockTable, Batch: true, Config: func(c *pgxpool.Config) {
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
		setClock := func(ctx context.Context, now time.Time) error {
			_, err := pool.Exec(ctx, "UPDATE "+clockTable+" SET now = $1", now)
			return err
		}
		return &lootref.Slot{
			Cluster: func(db lootfaults.Clock) lootfaults.Cluster { return lootref.NewCluster(st, db, setClock) },
			Empty: func(ctx context.Context) error {
				_, err := pool.Exec(ctx, truncate)
				return err
			},
			Drop: func(ctx context.Context) error {
				st.Close()
				return dropSchema(ctx)
			},
		}, nil
	}
}

// mysqlLootSlots opens slots on the MySQL or MariaDB server of dsn:
// database onceproof_loot_<tag>_<k> (the account needs CREATE and DROP).
func mysqlLootSlots(dsn, tag string) lootref.Opener {
	return func(ctx context.Context, k int) (*lootref.Slot, error) {
		run, dropDB, err := mysqlDatabase(ctx, dsn, fmt.Sprintf("onceproof_loot_%s_%d", tag, k))
		if err != nil {
			return nil, err
		}
		st, err := lootmysql.Open(ctx, run.FormatDSN(), lootmysql.Options{ClockTable: clockTable, Batch: true}) // as lootd serves it
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
		setClock := func(ctx context.Context, now time.Time) error {
			_, err := db.ExecContext(ctx, "UPDATE "+clockTable+" SET at = ?", now.UTC())
			return err
		}
		return &lootref.Slot{
			Cluster: func(clock lootfaults.Clock) lootfaults.Cluster { return lootref.NewCluster(st, clock, setClock) },
			Empty:   truncateAll(db, tables),
			Drop: func(ctx context.Context) error {
				return errors.Join(st.Close(), dropDB(ctx))
			},
		}, nil
	}
}

// mysqlDocSlots opens slots for loot-seed-verbatim on the MySQL or MariaDB
// server of dsn: database onceproof_doc_<tag>_<k> holding the document's
// schema.sql (docsql.Schema), its clock each statement's connection
// timestamp (seedverbatim.SQLTables).
func mysqlDocSlots(dsn, tag string) lootref.Opener {
	return func(ctx context.Context, k int) (*lootref.Slot, error) {
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
		return &lootref.Slot{
			Cluster: func(clock lootfaults.Clock) lootfaults.Cluster {
				return seedverbatim.NewCluster(seedverbatim.SQLTables(db, clock.Now))
			},
			Empty: truncateAll(db, []string{"loot_grant", "loot_intent", "loot_session"}),
			Drop: func(ctx context.Context) error {
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
type lootStores []*lootref.StoreDesign

// Name is the rows' names, joined by "+".
func (ds lootStores) Name() string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name()
	}
	return strings.Join(names, "+")
}

// Runs is the runs of every row.
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
