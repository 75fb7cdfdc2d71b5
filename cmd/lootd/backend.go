package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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
// setup.
func openBackend(ctx context.Context, c config) (*backend, error) {
	var (
		b   *backend
		err error
	)
	switch {
	case c.dev:
		b = memoryBackend()
	case strings.HasPrefix(c.db, "postgres://"), strings.HasPrefix(c.db, "postgresql://"):
		b, err = postgresBackend(ctx, c.db, c.dbConns)
	default:
		dsn, derr := mysqlDSN(c.db)
		if derr != nil {
			return nil, fmt.Errorf("%w: -db: %w", errUsage, derr)
		}
		b, err = mysqlBackend(ctx, dsn, c.dbConns)
	}
	if err != nil {
		return nil, err
	}
	if c.redis != "" {
		lock, err := redis.Open(ctx, c.redis, redis.Options{Prefix: c.redisPrefix})
		if err != nil {
			b.close()
			return nil, fmt.Errorf("-redis %s: %w", redactURL(c.redis), err)
		}
		closeStore := b.close
		b.lock, b.close = lock, func() error { return errors.Join(lock.Close(), closeStore()) }
	}
	return b, nil
}

// mysqlDSN turns -db's mysql://user:pass@host:port/db?params into
// go-sql-driver's user:pass@tcp(host:port)/db?params, and passes the
// driver's own form through.
func mysqlDSN(s string) (string, error) {
	if !strings.Contains(s, "://") {
		if !strings.Contains(s, "@tcp(") && !strings.Contains(s, "@unix(") {
			return "", errors.New("want postgres://..., mysql://... or a go-sql-driver DSN user:pass@tcp(host:3306)/db")
		}
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "mysql" {
		return "", fmt.Errorf("scheme %q, want postgres, postgresql or mysql", u.Scheme)
	}
	return mysql.DSN(s)
}

// redactURL is s with any password masked, for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}
