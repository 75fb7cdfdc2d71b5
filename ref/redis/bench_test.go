package redis_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/redis"
	"github.com/onceproof/onceproof/ref/storetest"
)

// benchConcs are the concurrency levels.
var benchConcs = []int{1, 16, 64}

var benchBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkStore measures one claim + commit (Begin of a fresh key, then
// Commit(Delivered)) with C callers at once, one script call each
// (backend=redis) or pipelined (backend=redis-batched).
//
//	go test -run '^$' -bench BenchmarkStore ./ref/redis
func BenchmarkStore(b *testing.B) {
	srv := testserver.Redis(b)
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

// BenchmarkSettle measures the seed-form Settle (window miss, claim, commit)
// on fresh fingerprints with C callers, and in the same run redis-benchmark
// sending the claim script (EVALSHA, fresh random keys) from C connections:
// the target is settles/s >= 0.8x redis-benchmark's requests/s. The
// ratio is reported as the metric "x-redis-benchmark", and against
// redis-benchmark's SET NX as "x-redis-benchmark-setnx". A Settle sends two
// scripts (claim, then commit), redis-benchmark one command.
//
//	go test -run '^$' -bench BenchmarkSettle -benchtime 200000x ./ref/redis
func BenchmarkSettle(b *testing.B) {
	srv := testserver.Redis(b)
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
				b.StopTimer()
				n := max(b.N, 1000) // a b.N=1 probe run needs no precise comparison
				sha, err := redis.LoadClaimScript(context.Background(), srv.URL())
				if err != nil {
					b.Fatal(err)
				}
				// The claim script on fresh random keys: the one command
				// a claim needs (a Settle sends it and the commit).
				rps, err := redisBenchmark(srv, conc, n, "EVALSHA", sha, "2", "rb:c:__rand_int__", "rb:pending",
					"player=1234567 room=42 amount=+100", "0", "__rand_int__")
				if err != nil {
					b.Logf("redis-benchmark not run: %v", err)
					return
				}
				b.ReportMetric(rps, "redis-benchmark-rps")
				b.ReportMetric(settles/rps, "x-redis-benchmark")
				// SET NX, the claim as the source document names it
				// (no state, no payload, no pending set).
				setnx, err := redisBenchmark(srv, conc, n, "SET", "rb:s:__rand_int__", "1", "NX")
				if err != nil {
					b.Logf("redis-benchmark SET NX not run: %v", err)
					return
				}
				b.ReportMetric(settles/setnx, "x-redis-benchmark-setnx")
			})
		}
	}
}

func openBench(b *testing.B, srv *testserver.RedisServer, batched bool) *redis.Store {
	b.Helper()
	s, err := redis.Open(context.Background(), srv.URL(), redis.Options{Prefix: testserver.RedisPrefix(b), Batch: batched, PoolSize: 128})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// parallel runs f(1..b.N) from conc goroutines and reports (and returns)
// calls per second.
func parallel(b *testing.B, conc int, f func(i int64) error) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := f(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rate := float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(rate, "ops/s")
	return rate
}

// redisBenchmark runs redis-benchmark against srv with conc connections
// (one request in flight each, its default) and n requests of cmd, and
// returns its requests per second.
func redisBenchmark(srv *testserver.RedisServer, conc, n int, cmd ...string) (float64, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, err
	}
	// -r: __rand_int__ ranges over 10^12 values, so claims are fresh as in
	// the Settle loop (a repeated key would be the cheaper duplicate path).
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port),
		"-c", strconv.Itoa(conc), "-n", strconv.Itoa(n), "-r", "1000000000000", "--csv"}
	out, err := exec.Command(bin, append(args, cmd...)...).Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %v", bin, err)
	}
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark --csv output %q: %v", out, err)
	}
	return strconv.ParseFloat(recs[1][1], 64)
}
