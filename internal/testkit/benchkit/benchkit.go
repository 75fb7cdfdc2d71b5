// Package benchkit is what the real stores' benchmarks share: the loop that
// runs b.N operations from C goroutines, and redis-benchmark (redis-tools)
// run against the same server for a baseline.
package benchkit

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Parallel runs op(1), ..., op(b.N), each once, from conc goroutines that
// take the next number as they finish the last, and returns operations per
// second. It resets b's timer before and stops it after, so what the
// caller does next is not timed. An op's error fails b and ends that
// goroutine.
func Parallel(b *testing.B, conc int, op func(i int64) error) float64 {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
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
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	return float64(b.N) / elapsed.Seconds()
}

// RedisBenchmark runs redis-benchmark against the server on 127.0.0.1:port
// for n requests with args (connections, pipelining, then the command) and
// returns its requests per second. -r: __rand_int__ ranges over 10^12
// values, so keys are fresh, as in the Go loops it is compared with (a
// repeated key would take a command's cheaper path).
func RedisBenchmark(port, n int, args ...string) (float64, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, err
	}
	base := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-n", strconv.Itoa(n), "-r", "1000000000000", "--csv"}
	out, err := exec.Command(bin, append(base, args...)...).Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %v", bin, err)
	}
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark --csv output %q: %v", out, err)
	}
	return strconv.ParseFloat(recs[1][1], 64)
}
