package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// BenchClaimCommit measures one settlement's store work, Begin of a new key
// then Commit(StateDelivered), with conc goroutines sharing s. One op is one
// claim+commit; ns/op is wall time divided by b.N, so it falls as conc
// raises throughput. It also reports claims/s. Name the benchmark
// BenchmarkStore/backend=NAME/conc=C so benchstat can line backends up.
//
// Keys are unique per call (the op index plus a per-run nonce), so every
// Begin really inserts: this measures the durable path, not the duplicate
// path a window would have caught.
func BenchClaimCommit(b *testing.B, s ref.Store, conc int) {
	if conc < 1 {
		b.Fatalf("storetest.BenchClaimCommit: conc must be >= 1, got %d", conc)
	}
	nonce := uint64(time.Now().UnixNano()) // keeps reruns on one database from colliding; not part of any result
	lease := base.Add(time.Minute)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		err  error
	)
	payload := []byte("bench-payload-32-bytes-long.....")
	b.ReportAllocs()
	b.ResetTimer()
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := b.Context()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				k := ref.KeyOf(suiteOp, nonce, uint64(i))
				st, created, e := s.Begin(ctx, ref.Claim{Key: k, Payload: payload, LeaseUntil: lease})
				if e == nil && (!created || st != ref.StateGranted) {
					e = fmt.Errorf("Begin of a new key = (%v, created=%v)", st, created)
				}
				if e == nil {
					e = s.Commit(ctx, k, ref.StateDelivered)
				}
				if e != nil {
					mu.Lock()
					if err == nil {
						err = e
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err != nil {
		b.Fatalf("claim+commit: %v", err)
	}
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(float64(b.N)/sec, "claims/s")
	}
}
