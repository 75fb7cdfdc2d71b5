//go:build floor

package bench

// The machine's floors under the window benchmarks: what any window pays
// on this machine before doing any work of its own, so a ratio target can
// be checked against what the hardware allows (issue "Window scaling").
// Behind the floor build tag: they measure the machine, not a design, and
// stay out of make bench and its baseline. Run them with
//
//	go test -tags floor -run '^$' -bench 'Floor|WindowPut(Parallel)?/impl=(floor-harness|ref)/live=131072$' -cpu 1,2 -count 3 ./bench/
//
// and compare ratios within one run (the machine is shared). On the 2-core
// machine of the issue, throughput at -cpu 2 over -cpu 1, medians of 3 in one
// quiet run: ALU 1.97x, ALU-ILP 1.94x, private lock 1.96x, private 4 MB
// writes 1.95x (the two CPUs are two cores, and a locked instruction on a
// private line scales); the harness alone 1.71x; 16 shared lock lines 0.68x
// (14.8 -> 43.8 ns per goroutine-op) and random writes to one shared 4 MB
// table 0.93x: what a line last written by the other core costs, which any
// exact window whose table the cores share pays on about every insert.
// ref's WindowPutParallel in the same run: 0.91x.

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func init() {
	// floor-harness: the benchmarks' own work alone (the stream's Next and
	// Record, the interface call), under a window that stores nothing.
	Impls = append(Impls, Impl{Name: "floor-harness", New: func(int, time.Duration) Dedup { return harnessOnly{} }})
}

type harnessOnly struct{}

func (harnessOnly) Put(key, val uint64, now time.Time) bool { return false }
func (harnessOnly) Close()                                  {}

// paddedMutex is a mutex and a counter alone on their cache lines.
type paddedMutex struct {
	_  [64]byte
	mu sync.Mutex
	n  int
	_  [64]byte
}

// floorSink keeps the compiler from dropping a loop's result.
var floorSink atomic.Uint64

// lcg is one step of Knuth's MMIX generator: a goroutine's own random
// stream, no shared state.
func lcg(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

// BenchmarkFloorALUParallel: per op, a dependent chain of 64
// multiply-xorshift steps on a local variable; no shared memory. 2x at
// -cpu 2 says the two CPUs are two cores.
func BenchmarkFloorALUParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		x := uint64(1)
		for pb.Next() {
			for range 64 {
				x = lcg(x)
				x ^= x >> 29
			}
		}
		floorSink.Add(x)
	})
}

// BenchmarkFloorALUParallelILP: 8 independent chains per goroutine, which
// saturate a core's multipliers: two hyperthreads of one core would share
// them and not scale, two cores do.
func BenchmarkFloorALUParallelILP(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var x [8]uint64
		for j := range x {
			x[j] = uint64(j + 1)
		}
		for pb.Next() {
			for range 8 {
				for j := range x {
					x[j] = x[j]*6364136223846793005 + uint64(2*j+1)
				}
			}
		}
		floorSink.Add(x[0] ^ x[1] ^ x[2] ^ x[3] ^ x[4] ^ x[5] ^ x[6] ^ x[7])
	})
}

// BenchmarkFloorLockPrivate: per op, lock and unlock the goroutine's own
// padded mutex: the lock's cost with no line shared between cores.
func BenchmarkFloorLockPrivate(b *testing.B) {
	var locks [64]paddedMutex
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		m := &locks[(next.Add(1)-1)%64]
		for pb.Next() {
			m.mu.Lock()
			m.n++
			m.mu.Unlock()
		}
	})
}

// BenchmarkFloorLockShards16: per op, lock one of 16 shared padded mutexes
// at random and bump its counter: ref.Window's shard line (RefShards = 16)
// with no table behind it. At -cpu 2 about half the ops find the line last
// written by the other core.
func BenchmarkFloorLockShards16(b *testing.B) {
	var locks [16]paddedMutex
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		x := uint64(next.Add(1))
		for pb.Next() {
			x = lcg(x)
			m := &locks[x>>60]
			m.mu.Lock()
			m.n++
			m.mu.Unlock()
		}
	})
}

// BenchmarkFloorWrite4MB: per op, an atomic add to a random word of a 4 MB
// buffer (ref's tables at live=131072 are 3.8 MB), the next index depending
// on the value read, so misses do not overlap. shared=true: one buffer for
// all goroutines, as a window's table is; false: one each. The difference
// is what writing lines the other core reads costs, whatever the design.
func BenchmarkFloorWrite4MB(b *testing.B) {
	const words = 4 << 20 / 8
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("shared=%v", shared), func(b *testing.B) {
			one := make([]atomic.Uint64, words)
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				buf := one
				if !shared {
					buf = make([]atomic.Uint64, words)
				}
				x := uint64(next.Add(1))
				for pb.Next() {
					x = lcg(x)
					x += buf[(x>>40)%words].Add(1) & 1 // depend on the load
				}
			})
		})
	}
}

// BenchmarkFloorMemChase: a dependent random pointer chase over a buffer
// of size bytes, one 64-byte line per node: ns per op is the load-to-use
// latency at that working set (chains=1), or per pair of loads whose misses
// may overlap (chains=2).
func BenchmarkFloorMemChase(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20, 16 << 20, 256 << 20} {
		n := size / 64
		buf := make([][8]uint64, n)
		perm := rand.New(rand.NewPCG(1, 2)).Perm(n) // fixed seed: the same chase every run
		for i := range n {
			buf[perm[i]][0] = uint64(perm[(i+1)%n])
		}
		for _, chains := range []int{1, 2} {
			b.Run(fmt.Sprintf("size=%dMB/chains=%d", size>>20, chains), func(b *testing.B) {
				p, q := uint64(perm[0]), uint64(perm[n/2])
				for range b.N {
					p = buf[p][0]
					if chains == 2 {
						q = buf[q][0]
					}
				}
				floorSink.Add(p + q)
			})
		}
	}
}
