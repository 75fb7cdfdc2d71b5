package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/nodetest"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/redis"
)

// TestMultiNodeExactlyOnce: three settler nodes, each with its own Window
// and its own client, share one Redis; duplicates are routed across them
// and some arrive at once. Half way through, node 0's network is cut: its
// in-flight claims stay Granted, the sender retries on the other nodes, and
// Recover completes the rest. The ledger must hold every settlement once.
func TestMultiNodeExactlyOnce(t *testing.T) {
	for _, batched := range []bool{false, true} {
		name := "single"
		if batched {
			name = "batched"
		}
		t.Run(name, func(t *testing.T) {
			srv := testserver.Redis(t)
			prefix := testserver.RedisPrefix(t)
			const nodes = 3
			var (
				settlers []*ref.Settler
				sinks    []*redis.Sink
				cut0     = &testserver.Cutter{}
			)
			for i := range nodes {
				opts := redis.Options{Prefix: prefix, Batch: batched}
				if i == 0 {
					opts.Config = cutBy(cut0)
				}
				s, err := redis.Open(t.Context(), srv.URL(), opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				sinks = append(sinks, s.Sink())
				settlers = append(settlers, ref.NewSettler(ref.NewWindow(time.Minute, 8), s,
					ref.WithSink(s.Sink()), ref.WithLease(time.Second)))
			}
			nodetest.Run(t, nodetest.Config{
				Nodes: settlers, Settlements: 300, Copies: 4, Goroutines: 16, Seed: 1,
				Fault: cut0.Cut,
				Ledger: func(ctx context.Context) ([]nodetest.Grant, error) {
					gs, err := sinks[1].Ledger(ctx)
					out := make([]nodetest.Grant, len(gs))
					for i, g := range gs {
						out[i] = nodetest.Grant{Key: g.Key, Payload: g.Payload}
					}
					return out, err
				},
			})
		})
	}
}
