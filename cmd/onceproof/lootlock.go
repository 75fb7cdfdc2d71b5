package main

import (
	"context"
	"errors"
	"time"

	"github.com/onceproof/onceproof/faults/loot"
	lootredis "github.com/onceproof/onceproof/ref/loot/redis"
	goredis "github.com/redis/go-redis/v9"
)

// lockForms is -lock's help and bad-input list.
const lockForms = "redis://[user:pass@]host:port/db (one key prefix per parallel run)"

// lockSlack is added to the ttl every real lock key gets. The world decides
// when a key's ttl ends, by its lock clock (redisLocks.expire); the server's
// own expiry must never come first, or a run would see a key vanish that
// the world still holds. A run takes milliseconds of real time and at most
// the watchdog's storeStall (a minute) per call; an hour is far past both,
// and still removes the keys of a process killed before its cleanup.
const lockSlack = time.Hour

// lockError is an error of the lock service, not of the database: the
// command names -lock's server for it.
type lockError struct{ err error }

func (e lockError) Error() string { return "lock service: " + e.err.Error() }
func (e lockError) Unwrap() error { return e.err }

// redisLocks is one run's lock service on a real Redis: ref/loot/redis's
// Lock (SET NX PX to acquire, its compare-and-delete script to release)
// under the run's key prefix, with Get and Del as plain GET and DEL. Redis
// expires keys by its own clock, which a run's virtual time outruns (a
// settler pauses a minute in microseconds), so the world's lock clock
// expires them: before every call, the key's ttl is checked against the
// call's time and the key deleted if it ended. A key then answers exactly
// as Redis would have at that time, and everything else (the command, the
// script, their atomicity, the token comparison) is the server's.
//
// The world serializes a run's lock calls (engine.Port.Apply), so the
// check and the call need no atomicity of their own; parallel runs use
// separate prefixes (one slot each).
type redisLocks struct {
	lock   *lootredis.Lock
	rdb    *goredis.Client
	prefix string
	// until is the end of each key's ttl by the lock service's clock, for
	// every key a SetNX of this run set and nothing deleted since.
	until map[string]time.Duration
	fail  func(error) // a server error: the run's verdict is void
}

var _ lootfaults.LockService = (*redisLocks)(nil)

// openRedisLocks connects a slot's lock service to the server at url under
// prefix. Its pool is 2 connections, not go-redis's default of 10 per
// CPU: a run's calls are serialized, so one is in use at a time, and with
// one slot per run in flight the server sees 2 per run in flight.
func openRedisLocks(ctx context.Context, url, prefix string) (*redisLocks, error) {
	lock, err := lootredis.Open(ctx, url, lootredis.Options{Prefix: prefix, PoolSize: 2})
	if err != nil {
		return nil, err
	}
	return &redisLocks{lock: lock, rdb: lock.Client(), prefix: prefix, until: map[string]time.Duration{}}, nil
}

// call runs f under storeTimeout; an error is reported to fail.
func (l *redisLocks) call(now time.Duration, key string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	err := l.expire(ctx, now, key)
	if err == nil {
		err = f(ctx)
	}
	if err != nil {
		err = lockError{err}
		if l.fail != nil {
			l.fail(err)
		}
	}
	return err
}

// expire deletes key if its ttl ended by now.
func (l *redisLocks) expire(ctx context.Context, now time.Duration, key string) error {
	if u, ok := l.until[key]; !ok || now < u {
		return nil
	}
	delete(l.until, key)
	return l.rdb.Del(ctx, l.prefix+key).Err()
}

func (l *redisLocks) SetNX(now time.Duration, key, token string, ttl time.Duration) (ok bool, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		ok, err = l.lock.Acquire(ctx, key, token, ttl+lockSlack)
		if ok {
			l.until[key] = now + ttl
		}
		return err
	})
	return ok, err
}

func (l *redisLocks) Get(now time.Duration, key string) (v string, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		v, err = l.rdb.Get(ctx, l.prefix+key).Result()
		if errors.Is(err, goredis.Nil) {
			v, err = "", nil
		}
		return err
	})
	return v, err
}

func (l *redisLocks) Del(now time.Duration, key string) (held bool, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		n, err := l.rdb.Del(ctx, l.prefix+key).Result()
		delete(l.until, key)
		held = n > 0
		return err
	})
	return held, err
}

func (l *redisLocks) Unlock(now time.Duration, key, token string) (ok bool, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		ok, err = l.lock.Release(ctx, key, token)
		if ok {
			delete(l.until, key)
		}
		return err
	})
	return ok, err
}

// empty deletes every key of the slot, for the next run.
func (l *redisLocks) empty(ctx context.Context) error {
	clear(l.until)
	return deletePrefix(ctx, l.rdb, l.prefix)
}

// close empties the slot and closes its client.
func (l *redisLocks) close(ctx context.Context) error {
	return errors.Join(l.empty(ctx), l.lock.Close())
}
