// Package redisstore is what the Redis reference packages (ref/redis,
// ref/loot/redis) do alike when they open: one client, configured the way
// their contracts need.
package redisstore

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/internal/redact"
)

// NewClient parses url (redis://[user:password@]host:port/db), builds a
// client and checks that the server answers a PING within ctx. The client
// does not retry a command on its own (MaxRetries -1): an error must reach
// the caller as "outcome unknown", where a silent retry of a command that
// landed would answer as if it had not (a second claim reports "exists", a
// second SET NX "held"). Callers' deadlines bound the socket reads and
// writes too. poolSize > 0 sets the pool size; config, if not nil, adjusts
// the options last.
func NewClient(ctx context.Context, url string, poolSize int, config func(*goredis.Options)) (*goredis.Client, error) {
	ro, err := goredis.ParseURL(url)
	if err != nil {
		return nil, redact.Error(err, url) // url.Parse's error quotes the whole URL
	}
	ro.MaxRetries = -1
	ro.ContextTimeoutEnabled = true
	if poolSize > 0 {
		ro.PoolSize = poolSize
	}
	if config != nil {
		config(ro)
	}
	rdb := goredis.NewClient(ro)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("%s: %w", ro.Addr, err)
	}
	return rdb, nil
}
