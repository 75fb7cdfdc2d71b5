package lootref

import (
	"context"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/internal/slots"
	"github.com/onceproof/onceproof/ref/loot"
)

// LockServer is a lock service the caller opened, under a key space of its
// own (a Redis server and a key prefix: ref/loot/redis's Lock with its
// client): ref/loot's Lock, SET NX PX to acquire and the
// compare-and-delete script to release, and the plain GET and DEL the
// world's lock calls also make (source 004's own release is a GET then a
// DEL). Each call is the server's, with its atomicity.
type LockServer interface {
	loot.Lock
	// Get returns key's token, "" if the key is absent.
	Get(ctx context.Context, key string) (string, error)
	// Del deletes key and reports whether it was there.
	Del(ctx context.Context, key string) (bool, error)
}

// lockSlack is added to the ttl every real lock key gets. The world decides
// when a key's ttl ends, by its lock clock (lockService.expire); the
// server's own expiry must never come first, or a run would see a key
// vanish that the world still holds. A run takes milliseconds of real time
// and at most a watchdog stall (two slots.Timeout: a minute) per call; an
// hour is far past both, and still removes the keys of a process killed
// before its cleanup.
const lockSlack = time.Hour

// LockService is l as the world's lock service (lootfaults.LockService,
// which must answer as lootfaults.NewLockModel does). A real server expires
// keys by its own clock, which a run's virtual time outruns (a settler
// pauses a minute in microseconds), so the world's lock clock expires
// them: before every call, the key's ttl is checked against the call's
// time and the key deleted if it ended. A key then answers exactly as the
// server would have at that time, and everything else (the command, the
// script, their atomicity, the token comparison) is the server's. One
// LockService serves one run, on a server emptied before it.
func LockService(l LockServer) lootfaults.LockService { return newLockService(l, nil) }

// lockService is one run's lock service on a LockServer. The world
// serializes a run's lock calls (engine.Port.Apply), so the check and the
// call need no atomicity of their own; parallel runs use separate key
// spaces (one slot each).
type lockService struct {
	server LockServer
	// until is the end of each key's ttl by the lock service's clock, for
	// every key a SetNX of this run set and nothing deleted since.
	until map[string]time.Duration
	fail  func(error) // a server error: the run's verdict is void
}

var _ lootfaults.LockService = (*lockService)(nil)

func newLockService(l LockServer, fail func(error)) *lockService {
	return &lockService{server: l, until: map[string]time.Duration{}, fail: fail}
}

// lockError is an error of the lock service, not of the database.
type lockError struct{ err error }

func (e lockError) Error() string { return "lock service: " + e.err.Error() }
func (e lockError) Unwrap() error { return e.err }

// call runs f under slots.Timeout; an error is reported to fail.
func (l *lockService) call(now time.Duration, key string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), slots.Timeout)
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
func (l *lockService) expire(ctx context.Context, now time.Duration, key string) error {
	if u, ok := l.until[key]; !ok || now < u {
		return nil
	}
	delete(l.until, key)
	_, err := l.server.Del(ctx, key)
	return err
}

func (l *lockService) SetNX(now time.Duration, key, token string, ttl time.Duration) (ok bool, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		ok, err = l.server.Acquire(ctx, key, token, ttl+lockSlack)
		if ok {
			l.until[key] = now + ttl
		}
		return err
	})
	return ok, err
}

func (l *lockService) Get(now time.Duration, key string) (v string, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		v, err = l.server.Get(ctx, key)
		return err
	})
	return v, err
}

func (l *lockService) Del(now time.Duration, key string) (held bool, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		held, err = l.server.Del(ctx, key)
		delete(l.until, key)
		return err
	})
	return held, err
}

func (l *lockService) Unlock(now time.Duration, key, token string) (ok bool, err error) {
	err = l.call(now, key, func(ctx context.Context) error {
		ok, err = l.server.Release(ctx, key, token)
		if ok {
			delete(l.until, key)
		}
		return err
	})
	return ok, err
}
