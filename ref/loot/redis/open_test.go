package redis_test

import (
	"context"
	"testing"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// Open does not quote a password when it refuses an address (go-redis's
// ParseURL returns url.Parse's error, which quotes the whole URL) or
// cannot reach it.
func TestOpenErrorsShowNoPassword(t *testing.T) {
	rt.RefusedWithoutSecrets(t, "Open", rt.Of(rt.Redis), func(ctx context.Context, addr string) error {
		_, err := redis.Open(ctx, addr, redis.Options{})
		return err
	})
}
