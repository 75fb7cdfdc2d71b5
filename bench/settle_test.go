package bench

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// BenchmarkSettle measures ref.Settler.Settle (the seed form: window, then
// MemStore; the caller delivers) on its three paths:
//   - fresh: every fingerprint is new: window miss, store claim, commit,
//     window put. The MemStore grows by one record per operation.
//   - windowdup: every fingerprint is one of 131072 settled ones, retried
//     inside the window's ttl: a window hit and nothing else. Compare with
//     BenchmarkWindowLookup (same keys, same order) and with
//     BenchmarkWindowPut/impl=ref/live=131072 (the window alone).
//   - storedup: the same retries after the window expired them (ttl 1ns):
//     window miss, store Begin finds the record, window put.
func BenchmarkSettle(b *testing.B) {
	for _, path := range []string{"fresh", "windowdup", "storedup"} {
		b.Run("path="+path, func(b *testing.B) {
			ttl := time.Hour
			if path == "storedup" {
				ttl = time.Nanosecond // every retry arrives after the window forgot it
			}
			s := ref.NewSettler(ref.NewWindow(ttl, RefShards), ref.NewMemStore())
			if path != "fresh" {
				for i := range lookupKeys {
					if _, fresh := s.Settle(ref.Fingerprint(mix64(uint64(i))), Epoch); !fresh {
						b.Fatalf("setup: key %d not fresh", i)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				now := Epoch.Add(time.Duration(i+1) * time.Nanosecond)
				var fp ref.Fingerprint
				if path == "fresh" {
					fp = ref.Fingerprint(mix64(uint64(1<<40 + i)))
				} else {
					fp = ref.Fingerprint(mix64(mix64(uint64(i)) % lookupKeys))
				}
				st, fresh := s.Settle(fp, now)
				if fresh != (path == "fresh") || st != ref.StateDelivered {
					b.Fatalf("path=%s op %d: Settle = (%v, %v) (go test -run='^$' -bench='BenchmarkSettle/path=%s$' ./bench/)", path, i, st, fresh, path)
				}
			}
			b.StopTimer()
			want := map[string]ref.SettlerStats{
				"fresh":     {Granted: b.N},
				"windowdup": {Granted: lookupKeys, WindowDup: b.N},
				"storedup":  {Granted: lookupKeys, StoreDup: b.N},
			}[path]
			if got := s.Stats(); got != want {
				b.Fatalf("path=%s: stats %+v, want %+v: the path measured is not the one named", path, got, want)
			}
		})
	}
}

// BenchmarkSettleParallel measures Settle on a window hit from every
// goroutine of b.RunParallel (GOMAXPROCS of them) on one Settler: the
// path=windowdup of BenchmarkSettle, on many cores. Run it with -cpu 1,2,...
// (make bench does) to read its scaling: a hit reads one key, so throughput
// should grow with the cores; where it does not, a line every call writes
// (the shard's mutex, the Settler's counters) is what stops it.
func BenchmarkSettleParallel(b *testing.B) {
	b.Run("path=windowdup", func(b *testing.B) {
		s := ref.NewSettler(ref.NewWindow(time.Hour, RefShards), ref.NewMemStore())
		for i := range lookupKeys {
			if _, fresh := s.Settle(ref.Fingerprint(mix64(uint64(i))), Epoch); !fresh {
				b.Fatalf("setup: key %d not fresh", i)
			}
		}
		var streams, misses atomic.Uint64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			// Each goroutine walks its own pseudo-random order of the settled
			// keys, at times inside the ttl.
			g := streams.Add(1) << 40
			for i := uint64(0); pb.Next(); i++ {
				fp := ref.Fingerprint(mix64(mix64(g|i) % lookupKeys))
				if st, fresh := s.Settle(fp, Epoch.Add(time.Duration(i&(1<<20-1)))); fresh || st != ref.StateDelivered {
					misses.Add(1)
				}
			}
		})
		b.StopTimer()
		if n := misses.Load(); n != 0 {
			b.Fatalf("%d settles of settled keys were not window hits (go test -run='^$' -bench='BenchmarkSettleParallel' ./bench/)", n)
		}
		if got := s.Stats(); got.WindowDup != b.N || got.Granted != lookupKeys {
			b.Fatalf("stats %+v, want %d window hits: the path measured is not the one named", got, b.N)
		}
	})
}

// ExampleStream shows the workload's first operations: distinct fresh keys
// and, one time in ten, a retry of a recent one.
func ExampleStream() {
	s := NewStream(0, 1024, Step)
	retries := 0
	for range 1000 {
		if _, _, retry := s.Next(); retry {
			retries++
		}
	}
	fmt.Println(retries, s.Now().Sub(Epoch))
	// Output: 95 1ms
}
