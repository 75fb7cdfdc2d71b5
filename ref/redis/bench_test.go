package redis_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/benchkit"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/redis"
	"github.com/onceproof/onceproof/ref/storetest"
)

// benchConcs are the concurrency levels: one caller, a busy node, a burst.
var benchConcs = []int{1, 16, 64}

var benchBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchServer starts a Redis without AOF for one benchmark, and openBench
// opens it with AllowWeakDurability. The benchmarks measure what the store
// and its client cost, and compare it with redis-benchmark on the same
// server; with appendfsync always both sides would mostly measure the
// disk's fsync (every event-loop pass that wrote), which is the
// deployment's price, not the store's. The tests run on a durable server.
func benchServer(b *testing.B) *testserver.RedisServer {
	return testserver.StartRedis(b, "--appendonly", "no")
}

// BenchmarkStore measures one claim + commit (Begin of a fresh key, then
// Commit(Delivered)) with C callers at once, one script call each
// (backend=redis) or coalesced into batch script calls
// (backend=redis-batched).
//
//	go test -run '^$' -bench BenchmarkStore ./ref/redis
func BenchmarkStore(b *testing.B) {
	srv := benchServer(b)
	for _, batched := range []bool{false, true} {
		name := "redis"
		if batched {
			name = "redis-batched"
		}
		for _, conc := range benchConcs {
			b.Run(fmt.Sprintf("backend=%s/conc=%d", name, conc), func(b *testing.B) {
				storetest.BenchClaimCommit(b, openBench(b, srv, batched), conc)
			})
		}
	}
}

// BenchmarkSettle measures the seed-form Settle (window miss, then one
// claim on a fresh fingerprint) with C callers, and in the same run
// redis-benchmark sending the equivalent command from C connections. The
// target is settles/s >= 0.8x redis-benchmark's requests/s at equal
// concurrency (C=64).
//
// The equivalent command: Store implements ref.DeliveredClaimer, so one
// Settle is one script call, claimDeliveredScript (EVALSHA SHA 1 KEY, an
// HGET and an HSET of one field). redis-benchmark sends exactly that, on
// fresh random keys (-r 10^12, so every call creates, as every Settle
// does), C connections with one request in flight each (-P 1, its default):
// C requests in flight, as C callers have. The metrics:
//
//   - x-redis-benchmark: settles/s over redis-benchmark EVALSHA of the same
//     script. The target's ratio.
//   - x-redis-benchmark-claim: over EVALSHA of Begin's claim script (which
//     also keeps payload and lease and adds the pending-set member): what a
//     Settle cost before BeginDelivered, as its first of two calls.
//   - x-redis-benchmark-setnx: over SET NX, the claim as the source document
//     names it (no state, no payload).
//   - x-redis-benchmark-pipelined: over redis-benchmark sending the same
//     script as pipelines of C from one connection (-c 1 -P C): also C
//     requests in flight, but the way backend=redis-batched sends them, so
//     it isolates what the Go client and Settler cost.
//
// Measured on the 2-core test machine while other test runs shared it
// (load average 5-7), -benchtime=100000x -count=3, conc=64, with the
// defaults (two batch workers): redis-batched 0.96-1.08x (87-154k
// settles/s against 90-143k EVALSHA/s; 0.69-1.13x of SET NX); unbatched
// redis 0.48-0.56x (55-74k/s: one connection per caller and a syscall per
// call on both sides, as redis-benchmark pays, plus go-redis's and the
// Settler's own cost on the same two cores). Other sessions, other loads:
// see the BatchWorkers paragraph below (0.96-1.66x batched). Before
// BeginDelivered and the one-script batch (a Settle was a claim script
// then a commit script, a batch a pipeline of both, one worker) the same
// command gave
// redis-batched 0.25-0.52x and redis 0.24-0.27x against the claim script.
// What moved it: one script per Settle instead of two (at most 0.5x
// before), one script call per batch instead of one EVALSHA per op (the
// server parses and enters Lua once per batch), internal/coalesce no
// longer allocating per call, and a second batch worker. So the target
// holds with Options.Batch, the configuration to deploy under concurrency;
// unbatched it does not (0.5-0.6x).
//
// Options.BatchWorkers, compared with -redisworkers, batched, conc=64, on
// the 2-core test machine after internal/coalesce stopped allocating per
// call: with load average ~2.5, one worker made 112-148k settles/s
// (0.87-1.39x redis-benchmark) and two 130-148k (0.96-1.06x); with load
// average ~9 (other test runs), one 123-153k (1.32-1.66x) and two 123-148k
// (1.12-1.46x). Two keep the ratio above the 0.8x target in every sample,
// hence the default. Earlier, with load average ~2, four and eight workers
// made 94-118k and 73-89k (0.84-0.90x, 0.69-0.86x): more workers split the
// callers into batches too small to pay. With one worker about 40% of the
// two cores sat idle at conc=64 (server and worker taking turns).
//
// Options.PoolSize, unbatched at conc=64: 44-53k settles/s with 16
// connections, 54-63k with 64 or 128; openBench uses -redispool (128).
//
//	go test -run '^$' -bench 'BenchmarkSettle//conc=64' -benchtime=100000x -count=3 ./ref/redis
func BenchmarkSettle(b *testing.B) {
	srv := benchServer(b)
	for _, batched := range []bool{false, true} {
		name := "redis"
		if batched {
			name = "redis-batched"
		}
		for _, conc := range benchConcs {
			b.Run(fmt.Sprintf("backend=%s/conc=%d", name, conc), func(b *testing.B) {
				s := openBench(b, srv, batched)
				st := ref.NewSettler(ref.NewWindow(time.Minute, 64), s)
				run := strconv.FormatInt(time.Now().UnixNano(), 10) // fresh keys in every round
				r, _ := strconv.ParseUint(run, 10, 64)
				settles := parallel(b, conc, func(i int64) error {
					if _, fresh := st.Settle(ref.FingerprintOf(0x5e77, r, uint64(i)), benchBase); !fresh {
						return fmt.Errorf("Settle of a fresh fingerprint returned fresh=false")
					}
					return nil
				})
				n := max(b.N, 1000) // a b.N=1 probe run needs no precise comparison
				ctx := context.Background()
				shaD, err := redis.LoadClaimDeliveredScript(ctx, srv.URL())
				if err != nil {
					b.Fatal(err)
				}
				shaC, err := redis.LoadClaimScript(ctx, srv.URL())
				if err != nil {
					b.Fatal(err)
				}
				cc := strconv.Itoa(conc)
				for _, cmp := range []struct {
					metric string
					args   []string
				}{
					{"x-redis-benchmark", []string{"-c", cc, "EVALSHA", shaD, "1", "rb:d:__rand_int__"}},
					{"x-redis-benchmark-claim", []string{"-c", cc, "EVALSHA", shaC, "2", "rb:c:__rand_int__", "rb:pending",
						"player=1234567 room=42 amount=+100", "0", "__rand_int__"}},
					{"x-redis-benchmark-setnx", []string{"-c", cc, "SET", "rb:s:__rand_int__", "1", "NX"}},
					{"x-redis-benchmark-pipelined", []string{"-c", "1", "-P", cc, "EVALSHA", shaD, "1", "rb:p:__rand_int__"}},
				} {
					rps, err := benchkit.RedisBenchmark(srv.Port, n, cmp.args...)
					if err != nil {
						b.Logf("redis-benchmark for %s not run: %v", cmp.metric, err)
						return
					}
					if cmp.metric == "x-redis-benchmark" {
						b.ReportMetric(rps, "redis-benchmark-rps")
					}
					b.ReportMetric(settles/rps, cmp.metric)
				}
			})
		}
	}
}

// benchPool and benchWorkers override openBench's pool size and batch
// workers, to compare configurations before changing a default.
var (
	benchPool    = flag.Int("redispool", 128, "client pool size in BenchmarkStore and BenchmarkSettle")
	benchWorkers = flag.Int("redisworkers", 0, "Options.BatchWorkers of the batched backends (0: the default)")
)

func openBench(b *testing.B, srv *testserver.RedisServer, batched bool) *redis.Store {
	b.Helper()
	s, err := redis.Open(context.Background(), srv.URL(), redis.Options{
		Prefix: testserver.RedisPrefix(b), Batch: batched, PoolSize: *benchPool, BatchWorkers: *benchWorkers,
		AllowWeakDurability: true, // benchServer: no AOF, on purpose
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// parallel runs f(1..b.N) from conc goroutines and reports (and returns)
// calls per second.
func parallel(b *testing.B, conc int, f func(i int64) error) float64 {
	rate := benchkit.Parallel(b, conc, f)
	b.ReportMetric(rate, "ops/s")
	return rate
}
