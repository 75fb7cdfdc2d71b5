package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	goredis "github.com/redis/go-redis/v9"
)

// Options configures Open. The zero value is valid.
type Options struct {
	// Prefix starts every key (tenants or tests sharing one Redis). Empty
	// keeps the caller's keys as they are.
	Prefix string
	// PoolSize is the client's connection pool size (default: go-redis's,
	// 10 per CPU). Every call holds a connection for its round trip.
	PoolSize int
	// Config, if set, adjusts the client options parsed from the URL
	// (dialer, TLS, timeouts) before the client is created.
	Config func(*goredis.Options)
	_      struct{}
}

// Lock is a loot.Lock on Redis. Safe for concurrent use.
type Lock struct {
	rdb    *goredis.Client
	prefix string
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
func Open(ctx context.Context, url string, opts Options) (*Lock, error) {
	ro, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("loot/redis: open: %w", err)
	}
	if opts.PoolSize < 0 {
		return nil, fmt.Errorf("loot/redis: open: PoolSize %d: %w", opts.PoolSize, loot.ErrBadArgument)
	}
	ro.MaxRetries = -1 // see the package doc
	ro.ContextTimeoutEnabled = true
	if opts.PoolSize > 0 {
		ro.PoolSize = opts.PoolSize
	}
	if opts.Config != nil {
		opts.Config(ro)
	}
	rdb := goredis.NewClient(ro)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("loot/redis: open %s: %w", ro.Addr, err)
	}
	return &Lock{rdb: rdb, prefix: opts.Prefix}, nil
}

// Acquire implements loot.Lock: SET key token NX PX ttl.
func (l *Lock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	if ttl <= 0 || token == "" {
		return false, fmt.Errorf("loot/redis: lock %q: ttl %v, token %q: %w", key, ttl, token, loot.ErrBadArgument)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("loot/redis: lock %q: %w", key, err)
	}
	ms := (ttl + time.Millisecond - 1) / time.Millisecond // held at least ttl
	err := l.rdb.Do(ctx, "SET", l.prefix+key, token, "NX", "PX", int64(ms)).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, goredis.Nil):
		return false, nil // held by someone, live by Redis's clock
	}
	return false, fmt.Errorf("loot/redis: lock %q: %w", key, err)
}

// Release implements loot.Lock: the compare-and-delete script.
func (l *Lock) Release(ctx context.Context, key, token string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("loot/redis: unlock %q: %w", key, err)
	}
	n, err := releaseScript.Run(ctx, l.rdb, []string{l.prefix + key}, token).Int64()
	if err != nil {
		return false, fmt.Errorf("loot/redis: unlock %q: %w", key, err)
	}
	return n == 1, nil
}

// Client returns the lock's client.
func (l *Lock) Client() *goredis.Client { return l.rdb }

// Close closes the client. Idempotent.
func (l *Lock) Close() error {
	if err := l.rdb.Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
		return fmt.Errorf("loot/redis: close: %w", err)
	}
	return nil
}
