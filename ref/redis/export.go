package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// LoadClaimScript loads the claim script into the server at url and returns
// its SHA-1, for running the same command from other tools (redis-benchmark
// EVALSHA SHA 2 CLAIMKEY PENDINGKEY PAYLOAD LEASEMS MEMBER).
func LoadClaimScript(ctx context.Context, url string) (string, error) {
	ro, err := goredis.ParseURL(url)
	if err != nil {
		return "", fmt.Errorf("redis: %w", err)
	}
	c := goredis.NewClient(ro)
	defer c.Close()
	sha, err := claimScript.Load(ctx, c).Result()
	if err != nil {
		return "", fmt.Errorf("redis: load claim script: %w", err)
	}
	return sha, nil
}
