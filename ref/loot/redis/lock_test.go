package redis_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

func TestMain(m *testing.M) { testserver.Main(m) }

func open(t testing.TB, url string, opts redis.Options) *redis.Lock {
	t.Helper()
	l, err := redis.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("redis.Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestLockConformance runs loottest.RunLock on a real Redis, one key prefix
// per subtest, with calls one command each and batched. Redis judges a
// key's ttl by its own clock, which nothing but time moves, so Advance
// sleeps. The suite's ttls are 100ms, so a probe meant to find a key still
// live has 50ms before it expires, and a shared 2-core machine under the
// race detector can stall longer (this test failed once, run beside
// another package; which check was not captured, and those probes are the
// only ones with so little slack): the harness runs the suite's schedule on a
// clock dilation times slower, every ttl and every Advance multiplied
// alike, which changes no outcome the suite checks and leaves 150ms.
func TestLockConformance(t *testing.T) {
	const dilation = 3
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			t.Parallel() // mostly sleeps, on prefixes of their own
			loottest.RunLock(t, func(t *testing.T) loottest.LockHarness {
				srv := testserver.Redis(t)
				opts := redis.Options{Prefix: testserver.RedisPrefix(t), Batch: batch}
				return loottest.LockHarness{
					Open: func(t *testing.T) loot.Lock {
						return dilated{Lock: open(t, srv.URL(), opts), by: dilation}
					},
					Advance: func(_ *testing.T, d time.Duration) { time.Sleep(dilation * d) },
				}
			})
		})
	}
}

// dilated is a Lock whose ttls are by times what its caller asks.
type dilated struct {
	*redis.Lock
	by time.Duration
}

func (d dilated) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	return d.Lock.Acquire(ctx, key, token, d.by*ttl)
}

// TestLockNeedsNoPersistence: Open accepts a server without AOF (the lock
// is an optimisation; see Open), where ref/redis refuses one.
func TestLockNeedsNoPersistence(t *testing.T) {
	srv := testserver.StartRedis(t, "--appendonly", "no")
	l := open(t, srv.URL(), redis.Options{})
	if ok, err := l.Acquire(t.Context(), loot.LockKey("S-1"), "A", time.Second); err != nil || !ok {
		t.Fatalf("Acquire on a server without AOF = %v, %v; want the lock", ok, err)
	}
}

// TestReleaseAfterScriptCacheLoss: a server that lost its script cache (a
// restart, SCRIPT FLUSH) answers EVALSHA with NOSCRIPT; Release falls back
// to EVAL and still deletes only its own key.
func TestReleaseAfterScriptCacheLoss(t *testing.T) {
	srv := testserver.Redis(t)
	prefix := testserver.RedisPrefix(t)
	l := open(t, srv.URL(), redis.Options{Prefix: prefix})
	ctx := t.Context()
	for round := range 2 {
		if ok, err := l.Acquire(ctx, "k", "A", time.Minute); err != nil || !ok {
			t.Fatalf("round %d: Acquire = %v, %v", round, ok, err)
		}
		if err := l.Client().ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if ok, err := l.Release(ctx, "k", "B"); err != nil || ok {
			t.Fatalf("round %d: Release with another token after SCRIPT FLUSH = %v, %v; want false, nil", round, ok, err)
		}
		if ok, err := l.Release(ctx, "k", "A"); err != nil || !ok {
			t.Fatalf("round %d: Release after SCRIPT FLUSH = %v, %v; want true, nil", round, ok, err)
		}
	}
}

// TestKeysAreTheCallersUnderThePrefix: the key in Redis is Prefix + the
// caller's key, holding the token for the ttl; a ttl under a millisecond
// is rounded up (PX 0 would be an error, and a lock shorter than asked
// would be wrong).
func TestKeysAreTheCallersUnderThePrefix(t *testing.T) {
	srv := testserver.Redis(t)
	prefix := testserver.RedisPrefix(t)
	l := open(t, srv.URL(), redis.Options{Prefix: prefix})
	ctx := t.Context()
	if ok, err := l.Acquire(ctx, loot.LockKey("S-9"), "tok", time.Minute); err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	key := prefix + "loot:settle:lock:S-9"
	if v, err := l.Client().Get(ctx, key).Result(); err != nil || v != "tok" {
		t.Errorf("GET %s = %q, %v; want the token", key, v, err)
	}
	if ttl, err := l.Client().PTTL(ctx, key).Result(); err != nil || ttl <= 59*time.Second || ttl > time.Minute {
		t.Errorf("PTTL %s = %v, %v; want just under a minute", key, ttl, err)
	}
	if ok, err := l.Acquire(ctx, "short", "tok", 500*time.Microsecond); err != nil || !ok {
		t.Errorf("Acquire with a 500µs ttl = %v, %v; want the lock for 1ms", ok, err)
	}
}

func TestOpenRejectsBadURLAndOptions(t *testing.T) {
	srv := testserver.Redis(t)
	if _, err := redis.Open(t.Context(), "http://nope", redis.Options{}); err == nil {
		t.Error("Open(http://nope) = nil error")
	}
	for _, opts := range []redis.Options{{PoolSize: -1}, {Batch: true, MaxBatch: -1}, {Batch: true, BatchWorkers: -1}} {
		if _, err := redis.Open(t.Context(), srv.URL(), opts); !errors.Is(err, loot.ErrBadArgument) {
			t.Errorf("Open(%+v) = %v, want ErrBadArgument", opts, err)
		}
	}
	l := open(t, srv.URL(), redis.Options{})
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := l.Acquire(t.Context(), "k", "A", ttl); !errors.Is(err, loot.ErrBadArgument) {
			t.Errorf("Acquire with ttl %v = %v, want ErrBadArgument", ttl, err)
		}
	}
	if _, err := l.Acquire(t.Context(), "k", "", time.Second); !errors.Is(err, loot.ErrBadArgument) {
		t.Errorf("Acquire with an empty token = %v, want ErrBadArgument", err)
	}
}
