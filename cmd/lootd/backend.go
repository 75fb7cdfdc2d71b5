package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/internal/redact"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/httpinventory"
	"github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// backend is what -db (or -dev) and -redis give the Service and the server.
type backend struct {
	kind      string // "memory", "mysql", "postgres": for the logs
	store     loot.Store
	inventory loot.Inventory
	fairness  loot.FairnessProvider
	// delivered counts a player's Wins as their SUCCESS grants: the
	// fairness once -inventory takes the items elsewhere and the store's
	// own inventory, which fairness reads, stays empty. It counts what
	// that inventory would hold: an item is in it exactly when its grant
	// is SUCCESS.
	delivered loot.FairnessProvider
	lock      loot.Lock // nil without -redis (and -dev): the CAS alone decides
	// now reads the store's clock, which judges every deadline: an open's
	// deadline is its now plus the claim window.
	now func(ctx context.Context) (time.Time, error)
	// pending counts the PENDING grants (loot.Store has no count: each
	// backend asks its own tables).
	pending func(ctx context.Context) (int, error)
	// ping says whether the store answers (/healthz).
	ping  func(ctx context.Context) error
	close func() error
}

// openBackend opens what c names. ctx bounds the connecting and the schema
// setup. An address that does not parse is a usage error, found before
// anything is dialled (a -redis that cannot work must not wait for the
// database's open). No error shows a password: it names the flag and its
// address masked, and the parser's or driver's message, which may quote
// the addresses it was given, is scrubbed of -db's, its DSN's, -redis's
// and -inventory's secrets.
func openBackend(ctx context.Context, c config) (*backend, error) {
	var dsn string
	fail := func(usage bool, flag, addr string, err error, want string) error {
		err = fmt.Errorf("%s %s: %w", flag, redact.Addr(addr), redact.Error(err, c.db, dsn, c.redis, c.inventory))
		if want != "" {
			err = fmt.Errorf("%w; want %s", err, want)
		}
		if usage {
			err = fmt.Errorf("%w: %w", errUsage, err)
		}
		return err
	}
	isPostgres := strings.HasPrefix(c.db, "postgres://") || strings.HasPrefix(c.db, "postgresql://")
	switch {
	case c.dev:
	case isPostgres:
		if _, err := pgxpool.ParseConfig(c.db); err != nil {
			return nil, fail(true, "-db", c.db, err, "")
		}
	default:
		var err error
		if dsn, err = mysqlDSN(c.db); err != nil {
			return nil, fail(true, "-db", c.db, err, dbForms)
		}
	}
	if c.redis != "" {
		if _, err := goredis.ParseURL(c.redis); err != nil {
			return nil, fail(true, "-redis", c.redis, err, "redis://[user:pass@]host:port/db")
		}
	}
	var inv *httpinventory.Client
	if c.inventory != "" {
		var err error
		if inv, err = httpinventory.New(inventoryOptions(c)); err != nil {
			return nil, fail(true, "-inventory", c.inventory, err, "http://host:port/path or https://...")
		}
	}
	var (
		b   *backend
		err error
	)
	switch {
	case c.dev:
		b = memoryBackendAt(c.now)
	case isPostgres:
		b, err = postgresBackend(ctx, c.db, c.dbConns, c.dbCoalesce)
	default:
		b, err = mysqlBackend(ctx, dsn, c.dbConns, c.dbCoalesce)
	}
	if err != nil {
		return nil, fail(false, "-db", c.db, err, "")
	}
	if inv != nil {
		closeStore := b.close
		b.inventory, b.fairness = inv, b.delivered
		b.close = func() error { inv.Close(); return closeStore() }
	}
	if c.redis != "" {
		lock, err := redis.Open(ctx, c.redis, redis.Options{Prefix: c.redisPrefix})
		if err != nil {
			b.close()
			return nil, fail(false, "-redis", c.redis, err, "")
		}
		closeStore := b.close
		b.lock, b.close = lock, func() error { return errors.Join(lock.Close(), closeStore()) }
	}
	return b, nil
}

// inventoryOptions is -inventory's client, sized by -lock-ttl and
// -db-conns. A settle delivers its grants one after another right after
// recording them, under the grants' lease (-lock-ttl); a delivery still
// running when it ends races compensation (harmless, the same key, but
// wasted). Each of at most httpinventory.DefaultAttempts (3) attempts
// gets lease/15, at most the library's 2 s (reached at the default 30 s
// lease), and the first backoff is a twentieth of that (100 ms at 2 s;
// it doubles once): a grant's worst case is 3.15 attempts' time = 0.21
// lease, so a drop's first four grants (0.84 lease) are done or handed to
// compensation within the lease even when the inventory hangs. The
// transport holds one connection per settle worker (each delivers one
// grant at a time) and one for the compensation pass; settles asked for
// over HTTP beyond that wait for a connection within their attempt.
func inventoryOptions(c config) httpinventory.Options {
	t := min(httpinventory.DefaultTimeout, c.lockTTL/15)
	return httpinventory.Options{URL: c.inventory, Timeout: t, Backoff: t / 20, MaxConns: inventoryConns(c)}
}

// inventoryConns is how many connections -inventory's client holds at
// most (0 without -inventory): see inventoryOptions.
func inventoryConns(c config) int {
	if c.inventory == "" {
		return 0
	}
	return settleWorkers(c.dbConns) + 1
}

// dbForms are -db's forms, for its usage errors.
const dbForms = "postgres://user:pass@host:5432/db, mysql://user:pass@host:3306/db or a go-sql-driver DSN user:pass@tcp(host:3306)/db"

// mysqlDSN turns -db's mysql://user:pass@host:port/db?params into
// go-sql-driver's user:pass@tcp(host:port)/db?params, and passes the
// driver's own form through; either must parse as the driver reads it.
// Its errors may quote s: print them through redact.Error.
func mysqlDSN(s string) (string, error) {
	dsn := s
	if !strings.Contains(s, "://") {
		if !strings.Contains(s, "@tcp(") && !strings.Contains(s, "@unix(") {
			return "", errors.New("neither a URL nor a go-sql-driver DSN")
		}
	} else {
		if scheme, _, _ := strings.Cut(s, "://"); scheme != "mysql" {
			return "", fmt.Errorf("scheme %q", scheme)
		}
		var err error
		if dsn, err = mysql.DSN(s); err != nil {
			return "", err
		}
	}
	if _, err := gomysql.ParseDSN(dsn); err != nil {
		return "", err
	}
	return dsn, nil
}
