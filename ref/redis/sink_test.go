package redis_test

import (
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/redis"
	"github.com/onceproof/onceproof/ref/storetest"
)

// TestSinkConformance runs storetest.RunSink on the SET NX sink; Applied
// counts the key's ledger entries (each one an applied effect), so a double
// credit shows as 2.
func TestSinkConformance(t *testing.T) {
	srv := testserver.Redis(t)
	storetest.RunSink(t, func(t *testing.T) storetest.SinkHarness {
		prefix := testserver.RedisPrefix(t)
		audit, err := redis.Open(t.Context(), srv.URL(), redis.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { audit.Close() })
		var (
			mu      sync.Mutex
			cutters = map[ref.Sink]*testserver.Cutter{}
		)
		return storetest.SinkHarness{
			Open: func(t *testing.T) ref.Sink {
				c := &testserver.Cutter{}
				s, err := redis.Open(t.Context(), srv.URL(), redis.Options{Prefix: prefix, Config: cutBy(c)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				k := s.Sink()
				mu.Lock()
				cutters[k] = c
				mu.Unlock()
				return k
			},
			Applied: func(t *testing.T, key ref.Key) ([]byte, int) {
				t.Helper()
				ledger, err := audit.Sink().Ledger(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				var (
					p []byte
					n int
				)
				for _, g := range ledger {
					if g.Key == key {
						p, n = g.Payload, n+1
					}
				}
				return p, n
			},
			Break: func(t *testing.T, k ref.Sink) {
				mu.Lock()
				defer mu.Unlock()
				cutters[k].Cut()
			},
		}
	})
}

// TestClaimsSurviveRestartWithAppendOnly: with appendonly yes and
// appendfsync always (what Open requires for durability), a
// restarted server still holds every claim and its state, and Recover on a
// new client finds the Granted ones.
func TestClaimsSurviveRestartWithAppendOnly(t *testing.T) {
	srv := testserver.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	s, err := redis.Open(t.Context(), srv.URL(), redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 10 {
		k := ref.KeyOf(7, uint64(i))
		if _, created, err := s.Begin(ctx, ref.Claim{Key: k, Payload: []byte{byte(i)}}); err != nil || !created {
			t.Fatalf("Begin %d: created=%v err=%v", i, created, err)
		}
		if i%2 == 0 {
			if err := s.Sink().Deliver(ctx, k, []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	srv.Restart(t)
	s2, err := redis.Open(ctx, srv.URL(), redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	settler := ref.NewSettler(ref.NewWindow(time.Minute, 4), s2, ref.WithSink(s2.Sink()))
	n, err := settler.Recover(ctx, benchBase.Add(time.Hour))
	if err != nil || n != 5 {
		t.Fatalf("Recover after restart = %d, %v; want the 5 Granted claims; reproduce: go test ./ref/redis -run %s", n, err, t.Name())
	}
	ledger, err := s2.Sink().Ledger(ctx)
	if err != nil || len(ledger) != 10 {
		t.Fatalf("ledger after restart and Recover has %d entries (%v), want 10", len(ledger), err)
	}
}

// TestSinkCommitsRecord: the sink reports CommitsRecord, and its Deliver
// really moves the claim to Delivered in the same script (the Settler skips
// its Commit on that word): after Apply the record is Delivered and nothing
// is pending.
func TestSinkCommitsRecord(t *testing.T) {
	srv := testserver.Redis(t)
	s, err := redis.Open(t.Context(), srv.URL(), redis.Options{Prefix: testserver.RedisPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	sink := s.Sink()
	if !sink.CommitsRecord() {
		t.Fatalf("Sink.CommitsRecord() = false; reproduce: go test ./ref/redis -run %s", t.Name())
	}
	k := ref.KeyOf(8, 1)
	if _, created, err := s.Begin(ctx, ref.Claim{Key: k, Payload: []byte("p")}); err != nil || !created {
		t.Fatalf("Begin: created=%v err=%v", created, err)
	}
	if err := sink.Deliver(ctx, k, []byte("p")); err != nil {
		t.Fatal(err)
	}
	if st, created, err := s.Begin(ctx, ref.Claim{Key: k}); err != nil || created || st != ref.StateDelivered {
		t.Fatalf("Begin after Deliver = (%v, created=%v, %v), want Delivered: the sink did not commit the record; reproduce: go test ./ref/redis -run %s", st, created, err, t.Name())
	}
	settler := ref.NewSettler(ref.NewWindow(time.Minute, 4), s, ref.WithSink(sink))
	k2 := ref.KeyOf(8, 2)
	if res, err := settler.Apply(ctx, k2, []byte("q"), benchBase); err != nil || !res.Fresh {
		t.Fatalf("Apply = %+v, %v", res, err)
	}
	if recs, err := s.Pending(ctx, benchBase.Add(time.Hour), 10); err != nil || len(recs) != 0 {
		t.Fatalf("Pending after Apply = %v, %v; want none (the sink commits the record)", recs, err)
	}
}
