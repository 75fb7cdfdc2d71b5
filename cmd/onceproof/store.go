package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	goredis "github.com/redis/go-redis/v9"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/impls/loot/seedverbatim"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/internal/redact"
	"github.com/onceproof/onceproof/internal/slots"
	"github.com/onceproof/onceproof/ref"
	lootmysql "github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/postgres"
	"github.com/onceproof/onceproof/ref/redis"
	"github.com/onceproof/onceproof/ref/sqlite"
)

// storeForms is the -store help and the bad-input message's list.
const storeForms = "sqlite:DIR (a directory; one database file per run inside it), " +
	"postgres://user:pass@host:port/db or postgresql://... (one table per run), " +
	"redis://host:port/db (one key prefix per run)"

// DefaultStoreN is -n for `matrix -store` when -n is not given (the
// in-memory matrix runs props.DefaultMatrixN = 200). A real store costs
// tens of microseconds (Redis) to milliseconds (PostgreSQL, SQLite's fsync)
// per call where MemStore costs nanoseconds, and every run also opens,
// creates and drops its own store: at 50 runs per cell, all 14 families
// stay within a minute on loopback servers (the measurements are in the
// README), with room for a server across a network. Re-measure before
// raising it.
const DefaultStoreN = 50

// DefaultLootStoreN is -n for `matrix -subject loot -store` when -n is not
// given: 10 schedules per cell, 300 under the families of rare failures
// (lootprops.World.Runs), 1,600 runs in all. A loot run on a real database
// costs 25-35 ms on loopback (a few dozen statements, the world's
// read-back after each, the clock moved before each, the tables emptied
// after): on the 2-core test machine the default took 47.5 s on
// PostgreSQL 15 and 55 s on MariaDB 10.11 (with a busy neighbour), so it
// stays within about a minute. Re-measure before raising it.
const DefaultLootStoreN = 20

// storeTimeout bounds one open or cleanup of a run's store: a server that
// does not answer fails the run's store (reported, exit 1) instead of
// hanging the matrix. It is the adapters' own bound on a slot.
const storeTimeout = slots.Timeout

// probeTimeout bounds the probe before the matrix starts. A server on the
// other side of the world answers a connection within a second; one that
// has not answered in 5 s is not going to, typically because it speaks
// another protocol (a PostgreSQL URL at a Redis port: Redis waits for the
// end of a command line that never comes).
const probeTimeout = 5 * time.Second

// storeStall is the runs' watchdog stall on a real store: one call may take
// up to storeTimeout before it fails, and that is not a design blocking.
const storeStall = 2 * storeTimeout

// storeSpec is a parsed -store value.
type storeSpec struct {
	kind   string // sqlite, postgres, redis: the row is "ref@"+kind
	target string // the directory (sqlite) or the URL
	weak   bool   // redis: accept a server that does not persist every write
	// lock is -lock's Redis URL (-subject loot): the lock service the
	// loot rows' runs use in place of the world's model. With it, kind
	// may be "" (-lock without -store: the rows' in-memory stores).
	lock string
}

// parseStore parses -store. Anything but the three forms, or a form its
// driver rejects, is bad input; the message never shows a password.
func parseStore(s string) (storeSpec, error) {
	bad := func(why string) error { return badStore("matrix: -store", s, "a store", why, storeForms) }
	switch {
	case strings.HasPrefix(s, "sqlite:"):
		dir := strings.TrimPrefix(s, "sqlite:")
		dir = strings.TrimPrefix(dir, "//") // sqlite:///abs/dir reads as /abs/dir
		if dir == "" {
			return storeSpec{}, bad("no directory")
		}
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			return storeSpec{}, badf("matrix: -store sqlite:%s: not a directory (sqlite:DIR puts one database file per run in DIR)", dir)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storeSpec{}, badf("matrix: -store sqlite:%s: %v", dir, err)
		}
		return storeSpec{kind: "sqlite", target: dir}, nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if _, err := pgconn.ParseConfig(s); err != nil {
			return storeSpec{}, bad(redact.Scrub(err.Error(), s))
		}
		return storeSpec{kind: "postgres", target: s}, nil
	case strings.HasPrefix(s, "redis://"):
		if why := redisURLError(s); why != "" {
			return storeSpec{}, bad(why)
		}
		return storeSpec{kind: "redis", target: s}, nil
	}
	return storeSpec{}, bad("")
}

// redisURLError is why s is not a usable redis:// URL, "" if it is.
func redisURLError(s string) string {
	if _, err := goredis.ParseURL(s); err != nil {
		return redact.Scrub(err.Error(), s)
	}
	if strings.TrimPrefix(s, "redis://") == "" {
		return "no host"
	}
	return ""
}

// parseLock parses -lock: a Redis server's redis:// URL.
func parseLock(s string) (string, error) {
	why := "not a redis:// URL"
	if strings.HasPrefix(s, "redis://") {
		why = redisURLError(s)
	}
	if why != "" {
		return "", badStore("matrix: -subject loot -lock", s, "a lock service", why, lockForms)
	}
	return s, nil
}

// parseLootStore parses -store for -subject loot: ref/loot's databases.
// Anything else, or a form its driver rejects, is bad input; the message
// never shows a password.
func parseLootStore(s string) (storeSpec, error) {
	bad := func(why string) error {
		return badStore("matrix: -subject loot -store", s, "a loot database", why, lootStoreForms)
	}
	switch {
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if _, err := pgconn.ParseConfig(s); err != nil {
			return storeSpec{}, bad(redact.Scrub(err.Error(), s))
		}
		return storeSpec{kind: "postgres", target: s}, nil
	case strings.HasPrefix(s, "mysql://"):
		dsn, err := lootmysql.DSN(s)
		if err == nil {
			_, err = gomysql.ParseDSN(dsn)
		}
		if err != nil {
			return storeSpec{}, bad(redact.Scrub(err.Error(), s, dsn))
		}
		return storeSpec{kind: "mysql", target: s}, nil
	}
	return storeSpec{}, bad("")
}

// badStore is the bad-input error for store value s: what it is not, why
// (if known) and the forms wanted, its password masked.
func badStore(flag, s, what, why, forms string) error {
	if why != "" {
		why = ": " + why
	}
	return badf("%s %s is not %s%s; want %s", flag, redact.Addr(s), what, why, forms)
}

// String is the store and the lock service without their secrets, for
// output: "-store X", "-store X -lock Y" or "-lock Y".
func (sp storeSpec) String() string {
	var parts []string
	if sp.kind != "" {
		parts = append(parts, "-store "+sp.store())
	}
	if sp.lock != "" {
		parts = append(parts, "-lock "+sp.lockAddr())
	}
	return strings.Join(parts, " ")
}

// store is -store's value without its secrets.
func (sp storeSpec) store() string {
	if sp.kind == "sqlite" {
		return "sqlite:" + sp.target
	}
	return redact.Addr(sp.target)
}

// lockAddr is -lock's value without its secrets.
func (sp storeSpec) lockAddr() string { return redact.Addr(sp.lock) }

// scrub removes sp's secrets (and anything that looks like a secret) from
// a driver's message, which may quote the addresses it was given: the
// store's, the DSN a mysql:// URL becomes, and the lock's.
func (sp storeSpec) scrub(msg string) string {
	addrs := []string{sp.target, sp.lock}
	if sp.kind == "mysql" {
		if dsn, err := lootmysql.DSN(sp.target); err == nil {
			addrs = append(addrs, dsn)
		}
	}
	return redact.Scrub(msg, addrs...)
}

// design returns ref on this store, and done, which removes what the
// command itself created (the SQLite run directory) after the matrix. tag
// makes this invocation's table names and key prefixes unique, so two
// matrices (or other users of the database) never share state.
func (sp storeSpec) design(tag string) (*refdesign.StoreDesign, func() error, error) {
	switch sp.kind {
	case "sqlite":
		if err := os.MkdirAll(sp.target, 0o755); err != nil {
			return nil, nil, badf("matrix: -store sqlite:%s: %v", sp.target, err)
		}
		dir, err := os.MkdirTemp(sp.target, "onceproof-matrix-")
		if err != nil {
			return nil, nil, badf("matrix: -store sqlite:%s: %v", sp.target, err)
		}
		open := func(_ context.Context, run int) (ref.PendingStore, func() error, error) {
			path := filepath.Join(dir, fmt.Sprintf("run-%d.db", run))
			st, err := sqlite.Open(path)
			if err != nil {
				return nil, nil, err
			}
			return st, func() error {
				err := st.Close()
				// The WAL and shared-memory files go with the database.
				for _, p := range []string{path, path + "-wal", path + "-shm"} {
					if e := os.Remove(p); e != nil && !errors.Is(e, os.ErrNotExist) {
						err = errors.Join(err, e)
					}
				}
				return err
			}, nil
		}
		return refdesign.OnStores("sqlite", open), func() error { return os.RemoveAll(dir) }, nil
	case "postgres":
		open := func(ctx context.Context, run int) (ref.PendingStore, func() error, error) {
			ctx, cancel := context.WithTimeout(ctx, storeTimeout)
			defer cancel()
			// "onceproof_run_" (14) + 8 hex + "_" + run: well under the
			// 48 bytes postgres.Options.Table allows.
			table := fmt.Sprintf("onceproof_run_%s_%d", tag, run)
			// The sink's grant table exists only if a Sink was made;
			// IF EXISTS covers both.
			drop := "DROP TABLE IF EXISTS " + table + ", " + table + "_grants"
			st, err := postgres.Open(ctx, sp.target, postgres.Options{Table: table})
			if err != nil {
				if errors.Is(ctx.Err(), context.Canceled) {
					// Interrupted (Ctrl-C cancels ctx) part-way through
					// Open's schema setup: its tables may exist already
					// and no cleanup is returned for them. Drop them on
					// a connection of their own. Not on a timeout: a
					// server too slow for Open would only hold the exit
					// for another storeTimeout.
					err = errors.Join(err, dropFresh(sp.target, drop))
				}
				return nil, nil, err
			}
			return st, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
				defer cancel()
				_, err := st.Pool().Exec(ctx, drop)
				return errors.Join(err, st.Close())
			}, nil
		}
		return refdesign.OnStores("postgres", open), func() error { return nil }, nil
	case "redis":
		open := func(ctx context.Context, run int) (ref.PendingStore, func() error, error) {
			ctx, cancel := context.WithTimeout(ctx, storeTimeout)
			defer cancel()
			prefix := fmt.Sprintf("onceproof:run:%s:%d:", tag, run)
			st, err := redis.Open(ctx, sp.target, redis.Options{Prefix: prefix, AllowWeakDurability: sp.weak})
			if err != nil {
				return nil, nil, err
			}
			return st, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
				defer cancel()
				return errors.Join(deletePrefix(ctx, st.Client(), prefix), st.Close())
			}, nil
		}
		return refdesign.OnStores("redis", open), func() error { return nil }, nil
	}
	return nil, nil, fmt.Errorf("matrix: store kind %q has no opener", sp.kind)
}

// dropFresh runs drop on a new connection to url, under storeTimeout of
// its own: the context of the Open it cleans up after is cancelled.
func dropFresh(url, drop string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("dropping an interrupted run's tables: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, drop); err != nil {
		return fmt.Errorf("dropping an interrupted run's tables: %w", err)
	}
	return nil
}

// deletePrefix deletes every key under prefix (SCAN, not KEYS: the server
// may be shared, and KEYS blocks it for the whole keyspace).
func deletePrefix(ctx context.Context, c *goredis.Client, prefix string) error {
	iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	return c.Del(ctx, keys...).Err()
}

// runTag is 8 random hex digits naming this invocation's tables and
// prefixes. It is read here, at the edge: the matrix's runs never see it.
func runTag() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// lootStoreDesigns builds the loot rows on -store's database and -lock's
// Redis and probes each (one schema or database created and emptied, one
// key prefix emptied) before the matrix starts: loot-ref (the default) on
// either kind or in memory (-lock alone), and on MySQL, when -designs
// names it, loot-seed-verbatim (its SQL is the document's MySQL). The
// caller must call Done after the matrix, which removes every run's
// schema, database and keys.
func lootStoreDesigns(ctx context.Context, sp storeSpec, list string, verbose bool) (lootStores, error) {
	rows := map[string]lootfaults.Design{lootref.Name: lootref.Design{}}
	if sp.kind == "mysql" {
		rows[seedverbatim.Name] = seedverbatim.Design{}
	}
	// The rows' names say where they run: loot-ref@postgres,
	// loot-ref@postgres+redis, loot-ref@memory+redis (-lock alone).
	where := cmp.Or(sp.kind, "memory")
	if sp.lock != "" {
		where += "+redis"
	}
	var names []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSuffix(strings.TrimSpace(name), "@"+where)
		switch {
		case name == "":
		case rows[name] == nil && name == seedverbatim.Name:
			return nil, badf("matrix: -subject loot -store: %s runs the document's MySQL statements, on a mysql:// database only", name)
		case rows[name] == nil:
			return nil, badf("matrix: -subject loot -store or -lock runs only the %s design (and on mysql://, %s: the other rows keep their durable state in their own in-memory stores), got -designs %q", lootref.Name, seedverbatim.Name, list)
		case !slices.Contains(names, name):
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		// The reference only: checking the user's database is the point.
		// The document's row runs when named: its declared failures are
		// derived for the in-memory matrix's budget, so at -store's
		// smaller default some do not show (the command says so).
		names = []string{lootref.Name}
	}
	tag, err := runTag()
	if err != nil {
		return nil, err
	}
	at := lootref.Where{DB: sp.kind}
	if sp.lock != "" {
		at.Lock = "redis"
	}
	var ds lootStores
	for _, name := range names {
		var open lootref.Opener
		switch {
		case sp.kind == "":
			open = memorySlots(rows[name])
		case sp.kind == "postgres":
			open = postgresLootSlots(sp.target, tag)
		case name == seedverbatim.Name:
			dsn, err := lootmysql.DSN(sp.target)
			if err != nil {
				return nil, err
			}
			open = mysqlDocSlots(dsn, tag)
		default:
			dsn, err := lootmysql.DSN(sp.target)
			if err != nil {
				return nil, err
			}
			open = mysqlLootSlots(dsn, tag)
		}
		if sp.lock != "" {
			// Each row its own prefixes: two rows' slot k must not share keys.
			open = withLocks(open, sp.lock, tag+":"+name+"-"+where)
		}
		ds = append(ds, lootref.OnSlots(rows[name], at, open))
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for _, d := range ds {
		if err := d.Probe(pctx); err != nil {
			err = errors.Join(err, ds.Done())
			// Name the server that failed: the database or the lock's.
			which := storeSpec{kind: sp.kind, target: sp.target}
			if errors.As(err, new(lockError)) {
				which = storeSpec{lock: sp.lock}
			}
			return nil, fmt.Errorf("matrix: cannot use %s: %s", which, storeError(err, sp, verbose))
		}
	}
	return ds, nil
}

// storeDesign builds the ref row on -store's store and probes it (one
// store opened and cleaned up) before the matrix starts. -designs may only
// name ref. done removes what the command created besides the runs' own
// stores (the SQLite run directory).
func storeDesign(ctx context.Context, sp storeSpec, list string, verbose bool) (*refdesign.StoreDesign, func() error, error) {
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name != "" && name != refdesign.Name && name != refdesign.Name+"@"+sp.kind {
			return nil, nil, badf("matrix: -store runs only the %s design (the other rows keep their durable state in their own in-memory stores), got -designs %q", refdesign.Name, list)
		}
	}
	tag, err := runTag()
	if err != nil {
		return nil, nil, err
	}
	sd, rmdir, err := sp.design(tag)
	if err != nil {
		return nil, nil, err
	}
	// The stores of runs the watchdog gave up on go too.
	done := func() error { return errors.Join(sd.Done(), rmdir()) }
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := sd.Probe(pctx); err != nil {
		done()
		return nil, nil, fmt.Errorf("matrix: cannot use %s: %s", sp, storeError(err, sp, verbose))
	}
	return sd, done, nil
}
