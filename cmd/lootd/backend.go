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
	"github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// backend is what -db (or -dev) and -redis give the Service and the server.
type backend struct {
	kind      string // "memory", "mysql", "postgres": for the logs
	store     loot.Store
	inventory loot.Inventory
	fairness  loot.FairnessProvider
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
// the addresses it was given, is scrubbed of -db's, its DSN's and -redis's
// secrets.
func openBackend(ctx context.Context, c config) (*backend, error) {
	var dsn string
	fail := func(usage bool, flag, addr string, err error, want string) error {
		err = fmt.Errorf("%s %s: %w", flag, redact.Addr(addr), redact.Error(err, c.db, dsn, c.redis))
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
	var (
		b   *backend
		err error
	)
	switch {
	case c.dev:
		b = memoryBackend()
	case isPostgres:
		b, err = postgresBackend(ctx, c.db, c.dbConns)
	default:
		b, err = mysqlBackend(ctx, dsn, c.dbConns)
	}
	if err != nil {
		return nil, fail(false, "-db", c.db, err, "")
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
