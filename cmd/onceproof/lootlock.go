package main

import (
	"context"
	"errors"

	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootredis "github.com/onceproof/onceproof/ref/loot/redis"
	goredis "github.com/redis/go-redis/v9"
)

// lockForms is -lock's help and bad-input list.
const lockForms = "redis://[user:pass@]host:port/db (one key prefix per parallel run)"

// lockError is an error of the lock service, not of the database: the
// command names -lock's server for it.
type lockError struct{ err error }

func (e lockError) Error() string { return "lock service: " + e.err.Error() }
func (e lockError) Unwrap() error { return e.err }

// redisLocks is a slot's lock server on a real Redis (lootref.LockServer):
// ref/loot/redis's Lock (SET NX PX to acquire, its compare-and-delete
// script to release) under the slot's key prefix, with Get and Del as
// plain GET and DEL. lootref runs it on the world's lock clock.
type redisLocks struct {
	*lootredis.Lock
	rdb    *goredis.Client
	prefix string
}

var _ lootref.LockServer = (*redisLocks)(nil)

// openRedisLocks connects a slot's lock server to the server at url under
// prefix. Its pool is 2 connections, not go-redis's default of 10 per
// CPU: a run's calls are serialized, so one is in use at a time, and with
// one slot per run in flight the server sees 2 per run in flight.
func openRedisLocks(ctx context.Context, url, prefix string) (*redisLocks, error) {
	lock, err := lootredis.Open(ctx, url, lootredis.Options{Prefix: prefix, PoolSize: 2})
	if err != nil {
		return nil, err
	}
	return &redisLocks{Lock: lock, rdb: lock.Client(), prefix: prefix}, nil
}

// Get implements lootref.LockServer: GET.
func (l *redisLocks) Get(ctx context.Context, key string) (string, error) {
	v, err := l.rdb.Get(ctx, l.prefix+key).Result()
	if errors.Is(err, goredis.Nil) {
		return "", nil
	}
	return v, err
}

// Del implements lootref.LockServer: DEL.
func (l *redisLocks) Del(ctx context.Context, key string) (bool, error) {
	n, err := l.rdb.Del(ctx, l.prefix+key).Result()
	return n > 0, err
}

// empty deletes every key of the slot, for the next run.
func (l *redisLocks) empty(ctx context.Context) error {
	return deletePrefix(ctx, l.rdb, l.prefix)
}

// close empties the slot and closes its client.
func (l *redisLocks) close(ctx context.Context) error {
	return errors.Join(l.empty(ctx), l.Lock.Close())
}
