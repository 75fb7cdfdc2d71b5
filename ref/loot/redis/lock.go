package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/internal/redisstore"
	"github.com/onceproof/onceproof/ref/loot"
	goredis "github.com/redis/go-redis/v9"
)

// Options configures Open. The zero value is valid.
type Options struct {
	// Prefix starts every key (tenants or tests sharing one Redis). Empty
	// keeps the caller's keys as they are.
	Prefix string
	// PoolSize is the client's connection pool size (default: go-redis's,
	// 10 per CPU). Without Batch every call holds a connection for its
	// round trip; with Batch each batch worker uses one.
	PoolSize int
	// Batch sends the concurrent Acquire and Release calls on this Lock as
	// one script call per batch (batchScript): one round trip, one command
	// for the server to parse and one entry into Lua for many. Turn it on
	// where many goroutines settle at once; a call alone (none other in
	// flight) is sent as without Batch, so it costs nothing at
	// concurrency 1 (coalesce.Lane). A batch touches
	// many keys in one script, which Redis Cluster refuses unless they
	// share a slot: with Batch, use a standalone server (or one shard).
	Batch bool
	// BatchWorkers is how many batches may be in flight at once (default
	// 2, with Batch only): one at the server while the next fills, as
	// ref/redis measured for its own batches.
	BatchWorkers int
	// MaxBatch bounds one batch (default 256: above the 64 concurrent
	// callers the benchmarks run, small enough that one script holds the
	// single-threaded server well under a millisecond).
	MaxBatch int
	// Config, if set, adjusts the client options parsed from the URL
	// (dialer, TLS, timeouts) before the client is created.
	Config func(*goredis.Options)
	_      struct{}
}

// Lock is a loot.Lock on Redis. Safe for concurrent use.
//
// Keys: Options.Prefix + key, where key is what the caller passes (the
// Service passes loot.LockKey(no), "loot:settle:lock:" + the session
// number: the document's own layout when Prefix is empty). The value is
// the holder's token. Each call touches one key, so standalone Redis, a
// replica set and Redis Cluster all work; Options.Batch sends concurrent
// calls as one script (batch.go): many keys in one call, so a standalone
// server only.
//
// Errors: the client does not retry commands on its own (MaxRetries -1): an
// error is "outcome unknown", which the Service handles (it goes on to the
// CAS), where a silent retry of an Acquire that landed would answer "held".
//
// Timeouts: a call returns by ctx's deadline (go-redis's
// ContextTimeoutEnabled: the deadline becomes the socket's), so a server
// that hangs with its connections open (stopped, swapping, a network that
// drops packets) costs a caller its own deadline, which the Service sets
// (loot.Config.LockTimeout). A ctx without a deadline falls back to the
// client's ReadTimeout and WriteTimeout (5s each by default; set them
// through Options.Config): cancelling such a ctx does not interrupt a read
// already waiting on the socket. With Batch, the caller returns at its
// deadline while the batch it joined runs on under the client's timeouts.
type Lock struct {
	rdb    *goredis.Client
	prefix string
	batch  *coalesce.Lane[op, bool] // nil unless Options.Batch; a caller alone skips its worker
}

var _ loot.Lock = (*Lock)(nil)

// releaseScript is the compare-and-delete: KEYS[1] the lock key, ARGV[1]
// the token. Returns 1 when it deleted the key.
var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)

// Open connects to the server at url (redis://[user:password@]host:port/db)
// and checks that it answers. ctx bounds the check.
//
// Persistence: none is required. The lock spares the database the CAS
// attempts of settlers that would lose anyway; a Redis that loses the key
// (a restart without AOF, an asynchronous failover, an expiry under a
// paused settler) lets a second settler past the lock, and the CAS refuses
// it. So Open does not ask for appendfsync always, unlike ref/redis, whose
// keys are the durable claims themselves.
//
// Use:
//
//	lock, err := redis.Open(ctx, "redis://cache:6379/0", redis.Options{})
//	svc, err := loot.New(loot.Config{Store: st, Inventory: inv, Fairness: history, Lock: lock})
func Open(ctx context.Context, url string, opts Options) (*Lock, error) {
	if opts.BatchWorkers == 0 {
		opts.BatchWorkers = 2
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 256
	}
	if opts.PoolSize < 0 || opts.BatchWorkers < 1 || opts.MaxBatch < 1 {
		return nil, fmt.Errorf("loot/redis: open: PoolSize %d, BatchWorkers %d, MaxBatch %d: %w",
			opts.PoolSize, opts.BatchWorkers, opts.MaxBatch, loot.ErrBadArgument)
	}
	rdb, err := redisstore.NewClient(ctx, url, opts.PoolSize, opts.Config) // no retries: see Lock
	if err != nil {
		return nil, fmt.Errorf("loot/redis: open: %w", err)
	}
	l := &Lock{rdb: rdb, prefix: opts.Prefix}
	if opts.Batch {
		l.batch = coalesce.NewLane(l.runBatch, coalesce.Options{Workers: opts.BatchWorkers, MaxBatch: opts.MaxBatch})
	}
	return l, nil
}

// Acquire implements loot.Lock: SET key token NX PX ttl, the ttl rounded
// up to the millisecond: one command, judged by Redis's clock, never
// extending a live key.
func (l *Lock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	if ttl <= 0 || token == "" {
		return false, fmt.Errorf("loot/redis: lock %q: ttl %v, token %q: %w", key, ttl, token, loot.ErrBadArgument)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("loot/redis: lock %q: %w", key, err)
	}
	ms := int64((ttl + time.Millisecond - 1) / time.Millisecond) // held at least ttl
	alone := func() (bool, error) {
		err := l.rdb.Do(ctx, "SET", l.prefix+key, token, "NX", "PX", ms).Err()
		if errors.Is(err, goredis.Nil) {
			return false, nil // held by someone, live by Redis's clock
		}
		return err == nil, err
	}
	ok, err := l.do(ctx, op{acquire: true, key: l.prefix + key, token: token, ms: ms}, alone)
	if err != nil {
		return false, fmt.Errorf("loot/redis: lock %q: %w", key, err)
	}
	return ok, nil
}

// do runs alone without Options.Batch, and with it through the Lane: alone
// too when no other call is in flight (a batch of one would cost a worker
// hand-off and the batch script for the same command), batched otherwise.
func (l *Lock) do(ctx context.Context, o op, alone func() (bool, error)) (bool, error) {
	if l.batch == nil {
		return alone()
	}
	return l.batch.Do(ctx, o, alone)
}

// Release implements loot.Lock: one Lua script, if GET key == token then
// DEL key, run by EVALSHA with an EVAL fallback when the server lost its
// script cache (a restart, SCRIPT FLUSH). The document's GET then DEL from
// the client can delete the next holder's lock.
func (l *Lock) Release(ctx context.Context, key, token string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("loot/redis: unlock %q: %w", key, err)
	}
	ok, err := l.do(ctx, op{key: l.prefix + key, token: token}, func() (bool, error) {
		n, err := releaseScript.Run(ctx, l.rdb, []string{l.prefix + key}, token).Int64()
		return n == 1, err
	})
	if err != nil {
		return false, fmt.Errorf("loot/redis: unlock %q: %w", key, err)
	}
	return ok, nil
}

// Ping says whether the server answers a PING within ctx: a readiness
// probe of the lock service that takes no key.
func (l *Lock) Ping(ctx context.Context) error {
	if err := l.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("loot/redis: ping: %w", err)
	}
	return nil
}

// Client returns the lock's client.
func (l *Lock) Client() *goredis.Client { return l.rdb }

// Close stops the batcher and closes the client. Idempotent.
func (l *Lock) Close() error {
	if l.batch != nil {
		l.batch.Close()
	}
	if err := l.rdb.Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
		return fmt.Errorf("loot/redis: close: %w", err)
	}
	return nil
}
