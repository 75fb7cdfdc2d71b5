package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// LoadClaimScript loads the claim script (Begin's) into the server at url
// and returns its SHA-1, for running the same command from other tools
// (redis-benchmark EVALSHA SHA 2 CLAIMKEY PENDINGKEY PAYLOAD LEASEMS MEMBER).
func LoadClaimScript(ctx context.Context, url string) (string, error) {
	return loadScript(ctx, url, "claim", claimScript)
}

// LoadClaimDeliveredScript loads the claim-delivered script (BeginDelivered's,
// the one command of a seed-form Settle) into the server at url and returns
// its SHA-1 (redis-benchmark EVALSHA SHA 1 CLAIMKEY).
func LoadClaimDeliveredScript(ctx context.Context, url string) (string, error) {
	return loadScript(ctx, url, "claim-delivered", claimDeliveredScript)
}

func loadScript(ctx context.Context, url, name string, s *goredis.Script) (string, error) {
	ro, err := goredis.ParseURL(url)
	if err != nil {
		return "", fmt.Errorf("redis: %w", err)
	}
	c := goredis.NewClient(ro)
	defer c.Close()
	sha, err := s.Load(ctx, c).Result()
	if err != nil {
		return "", fmt.Errorf("redis: load %s script: %w", name, err)
	}
	return sha, nil
}
