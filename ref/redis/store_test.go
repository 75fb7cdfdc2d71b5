package redis_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
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
		return testserver.CutHarness(func(t *testing.T, c *testserver.Cutter) ref.PendingStore {
			s, err := redis.Open(t.Context(), srv.URL(), redis.Options{Prefix: prefix, Batch: batch, Config: cutBy(c)})
			if err != nil {
				t.Fatalf("redis.Open: %v", err)
			}
			return s
		})
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

// TestOpenRefusesServerThatDoesNotPersistEveryWrite: Open checks the
// server's AOF settings and refuses, naming the setting, a server that can
// lose acknowledged claims in a crash; AllowWeakDurability accepts it.
func TestOpenRefusesServerThatDoesNotPersistEveryWrite(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--appendonly", "no"}, "runs with appendonly no"},
		{[]string{"--appendonly", "yes", "--appendfsync", "everysec"}, "runs with appendfsync everysec"},
	} {
		srv := testserver.StartRedis(t, tc.args...)
		_, err := redis.Open(t.Context(), srv.URL(), redis.Options{})
		if !errors.Is(err, redis.ErrNotDurable) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "AllowWeakDurability") {
			t.Errorf("Open on a server run with %v = %v; want ErrNotDurable saying %s and naming AllowWeakDurability; reproduce: go test ./ref/redis -run %s",
				tc.args, err, tc.want, t.Name())
		}
		s, err := redis.Open(t.Context(), srv.URL(), redis.Options{AllowWeakDurability: true})
		if err != nil {
			t.Fatalf("Open with AllowWeakDurability on a server run with %v = %v, want success; reproduce: go test ./ref/redis -run %s", tc.args, err, t.Name())
		}
		if _, created, err := s.Begin(t.Context(), ref.Claim{Key: ref.KeyOf(10, 1)}); err != nil || !created {
			t.Errorf("Begin on the weak store = created %v, %v; want a claim", created, err)
		}
		s.Close()
	}
}

// TestOpenSaysWhenConfigIsHidden: a server that renamed CONFIG away cannot
// be checked; Open says so (not "not durable" alone) and points to the
// option, which then opens it.
func TestOpenSaysWhenConfigIsHidden(t *testing.T) {
	srv := testserver.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always", "--rename-command", "CONFIG", "")
	_, err := redis.Open(t.Context(), srv.URL(), redis.Options{})
	if !errors.Is(err, redis.ErrNotDurable) || !strings.Contains(err.Error(), "refused CONFIG GET") || !strings.Contains(err.Error(), "AllowWeakDurability") {
		t.Fatalf("Open on a server without CONFIG = %v; want ErrNotDurable saying CONFIG GET was refused and naming AllowWeakDurability; reproduce: go test ./ref/redis -run %s", err, t.Name())
	}
	s, err := redis.Open(t.Context(), srv.URL(), redis.Options{AllowWeakDurability: true})
	if err != nil {
		t.Fatalf("Open with AllowWeakDurability on a server without CONFIG = %v, want success; reproduce: go test ./ref/redis -run %s", err, t.Name())
	}
	s.Close()
}

func TestDeliveredClaimer(t *testing.T) { storetest.RunDeliveredClaimer(t, harness(false)) }

func TestBatchedDeliveredClaimer(t *testing.T) { storetest.RunDeliveredClaimer(t, harness(true)) }

// TestForeignKeyTypeFailsOnlyItsCall: a claim key that holds another type
// (another program wrote it) fails the calls on that key with ErrReply and,
// batched, leaves the other calls of the same batch answered.
func TestForeignKeyTypeFailsOnlyItsCall(t *testing.T) {
	srv := testserver.Redis(t)
	for _, batch := range []bool{false, true} {
		prefix := testserver.RedisPrefix(t)
		s, err := redis.Open(t.Context(), srv.URL(), redis.Options{Prefix: prefix, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		bad, good := ref.KeyOf(9, 1), ref.KeyOf(9, 2)
		kb := bad.Bytes()
		if err := s.Client().Set(t.Context(), prefix+"c:"+hex.EncodeToString(kb[:]), "not a hash", 0).Err(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		wg.Add(4)
		go func() { defer wg.Done(); _, _, errs[0] = s.Begin(t.Context(), ref.Claim{Key: bad}) }()
		go func() { defer wg.Done(); _, _, errs[1] = s.BeginDelivered(t.Context(), ref.Claim{Key: bad}) }()
		go func() { defer wg.Done(); errs[2] = s.Commit(t.Context(), bad, ref.StateDelivered) }()
		go func() {
			defer wg.Done()
			var created bool
			if _, created, errs[3] = s.Begin(t.Context(), ref.Claim{Key: good}); errs[3] == nil && !created {
				errs[3] = errors.New("Begin of a fresh key did not create it")
			}
		}()
		wg.Wait()
		for i, err := range errs[:3] {
			if !errors.Is(err, redis.ErrReply) {
				t.Errorf("batch=%v: call %d on a key holding a string = %v, want ErrReply; reproduce: go test ./ref/redis -run %s", batch, i, err, t.Name())
			}
		}
		if errs[3] != nil {
			t.Errorf("batch=%v: Begin of another key beside it = %v, want success; reproduce: go test ./ref/redis -run %s", batch, errs[3], t.Name())
		}
	}
}
