package redis_test

import (
	"context"
	"testing"
	"time"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// Open does not quote a password when it refuses an address (go-redis's
// ParseURL returns url.Parse's error, which quotes the whole URL) or
// cannot reach it.
func TestOpenErrorsShowNoPassword(t *testing.T) {
	for _, c := range rt.Of(rt.Redis) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // port 1 refuses at once
		_, err := redis.Open(ctx, c.Addr, redis.Options{})
		cancel()
		if err == nil {
			t.Errorf("%s: Open(%q) succeeded; want refused", c.Name, c.Addr)
		} else if p := c.Problem(err.Error() + rt.Host); p != "" {
			t.Errorf("%s: Open(%q) = %q: %s", c.Name, c.Addr, err, p)
		}
	}
}
