package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
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
// creates and drops its own store. Measured on the 2-core test machine,
// servers on loopback, load average ~2, all 14 families (700 runs):
// PostgreSQL 15 s, SQLite 7.5 s, Redis 1.3 s; 20 per cell took 6.2, 2.4 and
// 0.5 s. 50 keeps a default run under the minute's budget with room for a
// server across a network (each call's round trip is added). Redo the
// measurement (README, "Your own PostgreSQL or Redis") before raising it.
const DefaultStoreN = 50

// storeTimeout bounds one open or cleanup: a server that does not answer
// fails the run's store (reported, exit 1) instead of hanging the matrix.
const storeTimeout = 30 * time.Second

// storeSpec is a parsed -store value.
type storeSpec struct {
	kind   string // sqlite, postgres, redis: the row is "ref@"+kind
	target string // the directory (sqlite) or the URL
}

// parseStore parses -store. Anything but the three forms is bad input.
func parseStore(s string) (storeSpec, error) {
	bad := badf("matrix: -store %q is not a store; want %s", s, storeForms)
	switch {
	case strings.HasPrefix(s, "sqlite:"):
		dir := strings.TrimPrefix(s, "sqlite:")
		dir = strings.TrimPrefix(dir, "//") // sqlite:///abs/dir reads as /abs/dir
		if dir == "" {
			return storeSpec{}, bad
		}
		return storeSpec{kind: "sqlite", target: dir}, nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if u, err := url.Parse(s); err != nil || u.Host == "" && u.RawQuery == "" {
			return storeSpec{}, bad
		}
		return storeSpec{kind: "postgres", target: s}, nil
	case strings.HasPrefix(s, "redis://"):
		if u, err := url.Parse(s); err != nil || u.Host == "" {
			return storeSpec{}, bad
		}
		return storeSpec{kind: "redis", target: s}, nil
	}
	return storeSpec{}, bad
}

// String is the store without its password, for output.
func (sp storeSpec) String() string {
	if sp.kind == "sqlite" {
		return "sqlite:" + sp.target
	}
	u, err := url.Parse(sp.target)
	if err != nil {
		return sp.kind
	}
	return u.Redacted()
}

// design returns ref on this store, and done, which removes what the
// command itself created (the SQLite run directory) after the matrix. tag
// makes this invocation's table names and key prefixes unique, so two
// matrices (or other users of the database) never share state.
func (sp storeSpec) design(tag string) (*refdesign.StoreDesign, func() error, error) {
	switch sp.kind {
	case "sqlite":
		if err := os.MkdirAll(sp.target, 0o755); err != nil {
			return nil, nil, fmt.Errorf("matrix: -store sqlite: %w", err)
		}
		dir, err := os.MkdirTemp(sp.target, "onceproof-matrix-")
		if err != nil {
			return nil, nil, fmt.Errorf("matrix: -store sqlite: %w", err)
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
		return refdesign.WithStore("sqlite", open), func() error { return os.RemoveAll(dir) }, nil
	case "postgres":
		open := func(ctx context.Context, run int) (ref.PendingStore, func() error, error) {
			ctx, cancel := context.WithTimeout(ctx, storeTimeout)
			defer cancel()
			// "onceproof_run_" (14) + 8 hex + "_" + run: well under the
			// 48 bytes postgres.Options.Table allows.
			table := fmt.Sprintf("onceproof_run_%s_%d", tag, run)
			st, err := postgres.Open(ctx, sp.target, postgres.Options{Table: table})
			if err != nil {
				return nil, nil, err
			}
			return st, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
				defer cancel()
				// The sink's grant table exists only if a Sink was made;
				// IF EXISTS covers both.
				_, err := st.Pool().Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_grants")
				return errors.Join(err, st.Close())
			}, nil
		}
		return refdesign.WithStore("postgres", open), func() error { return nil }, nil
	case "redis":
		open := func(ctx context.Context, run int) (ref.PendingStore, func() error, error) {
			ctx, cancel := context.WithTimeout(ctx, storeTimeout)
			defer cancel()
			prefix := fmt.Sprintf("onceproof:run:%s:%d:", tag, run)
			st, err := redis.Open(ctx, sp.target, redis.Options{Prefix: prefix})
			if err != nil {
				return nil, nil, err
			}
			return st, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
				defer cancel()
				return errors.Join(deletePrefix(ctx, st, prefix), st.Close())
			}, nil
		}
		return refdesign.WithStore("redis", open), func() error { return nil }, nil
	}
	return nil, nil, fmt.Errorf("matrix: store kind %q has no opener", sp.kind)
}

// deletePrefix deletes every key under prefix (SCAN, not KEYS: the server
// may be shared, and KEYS blocks it for the whole keyspace).
func deletePrefix(ctx context.Context, st *redis.Store, prefix string) error {
	c := st.Client()
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
