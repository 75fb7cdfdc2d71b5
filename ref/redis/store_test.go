package redis_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/internal/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/redis"
	"github.com/onceproof/onceproof/ref/storetest"
	goredis "github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// harness opens handles under one fresh key prefix; each handle dials
// through its own Cutter so Break cuts that handle alone.
func harness(batch bool) func(t *testing.T) storetest.Harness {
	return func(t *testing.T) storetest.Harness {
		srv := testserver.Redis(t)
		prefix := testserver.RedisPrefix(t)
		var (
			mu      sync.Mutex
			cutters = map[ref.PendingStore]*testserver.Cutter{}
		)
		return storetest.Harness{
			Open: func(t *testing.T) ref.PendingStore {
				c := &testserver.Cutter{}
				s, err := redis.Open(t.Context(), srv.URL(), redis.Options{Prefix: prefix, Batch: batch, Config: cutBy(c)})
				if err != nil {
					t.Fatalf("redis.Open: %v", err)
				}
				mu.Lock()
				cutters[s] = c
				mu.Unlock()
				return s
			},
			Break: func(t *testing.T, s ref.PendingStore) {
				mu.Lock()
				defer mu.Unlock()
				cutters[s].Cut()
			},
		}
	}
}

// cutBy makes a client dial through c, and give up on the first failed
// dial (the default, 5 tries 100ms apart, only slows a test whose network
// is cut on purpose).
func cutBy(c *testserver.Cutter) func(*goredis.Options) {
	return func(o *goredis.Options) {
		o.Dialer = c.DialContext
		o.DialerRetries = 1
	}
}

func TestStoreConformance(t *testing.T) { storetest.Run(t, harness(false)) }

func TestBatchedStoreConformance(t *testing.T) { storetest.Run(t, harness(true)) }

func TestOpenRejectsBadURLAndOptions(t *testing.T) {
	srv := testserver.Redis(t)
	if _, err := redis.Open(t.Context(), "http://nope", redis.Options{}); err == nil {
		t.Errorf("Open(http://nope) = nil error; reproduce: go test ./ref/redis -run %s", t.Name())
	}
	if _, err := redis.Open(t.Context(), srv.URL(), redis.Options{MaxBatch: -1}); !errors.Is(err, redis.ErrBadOptions) {
		t.Errorf("Open(MaxBatch=-1) = %v, want ErrBadOptions; reproduce: go test ./ref/redis -run %s", err, t.Name())
	}
}

func TestDeliveredClaimer(t *testing.T) { storetest.RunDeliveredClaimer(t, harness(false)) }

func TestBatchedDeliveredClaimer(t *testing.T) { storetest.RunDeliveredClaimer(t, harness(true)) }
