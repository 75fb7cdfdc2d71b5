package bench

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// Lives are the live-set sizes of the window benchmarks: one that fits in L1/L2,
// the reference size 2^17, and 2^20 (far beyond the last-level cache of
// the machines measured).
var Lives = []int{1024, 131072, 1048576}

// valSalt makes the stored value differ from the key (a window must return
// the value, not echo the key).
const valSalt = 0x5bd1e995

// warm runs a stream against d from empty to steady state and resets the
// stream's counts after the first ttl, when the live set is full.
func warm(d Dedup, s *Stream, live int) {
	full := WarmOps(live) - live/8
	for i := range WarmOps(live) {
		if i == full {
			s.ResetCounts()
		}
		k, now, retry := s.Next()
		s.Record(retry, d.Put(k, k^valSalt, now))
	}
}

// fixture is a warmed instance and its stream. The testing package calls a
// benchmark function several times (b.N = 1, then growing b.N until the
// benchtime is reached); every call of the same benchmark continues the
// fixture the previous call left, so the warm-up (a full ttl of operations,
// seconds for the slow caches at live=1048576) is paid once per benchmark.
type fixture struct {
	name  string
	d     Dedup
	s     *Stream
	bytes int64
}

var pending *fixture

// getFixture returns the fixture an earlier call of this benchmark left, or
// builds a new one (closing the one another benchmark left).
func getFixture(b *testing.B, im Impl, live int) *fixture {
	if f := pending; f != nil {
		if f.name == b.Name() {
			return f
		}
		pending = nil
		f.d.Close()
	}
	s := NewStream(0, live, Step)
	d, bytes := Build(im, live, func(d Dedup) { warm(d, s, live) })
	pending = &fixture{name: b.Name(), d: d, s: s, bytes: bytes}
	return pending
}

// streamIDs hands out stream ids for parallel streams: a reused fixture has
// seen the keys of the previous run's streams, so every run's streams need
// ids (and so keys) of their own. 0 is the warm-up stream's.
var streamIDs atomic.Uint64

func newStreamID() uint64 { return 1 + streamIDs.Add(1)%(1<<16-1) }

// report adds the metrics and fails an exact implementation that missed an
// in-ttl retry (strict) or reported a fresh key as existing (always).
func report(b *testing.B, im Impl, live int, bytes int64, retries, caught, falseHits int, strict bool) {
	b.ReportMetric(float64(bytes)/float64(live), "bytes/live-entry")
	if retries > 0 {
		b.ReportMetric(float64(caught)/float64(retries), "catch-rate")
	}
	if im.Exact && ((strict && caught != retries) || falseHits != 0) {
		b.Fatalf("%s is exact but caught %d of %d in-ttl retries and reported %d fresh keys as existing (go test -run='^$' -bench='BenchmarkWindowPut/impl=%s/live=%d$' -benchtime=1x ./bench/)",
			im.Name, caught, retries, falseHits, im.Name, live)
	}
}

// BenchmarkWindowPut measures one goroutine running the stream against each
// implementation at each live-set size.
//
// Metrics besides ns/op, B/op and allocs/op:
//
//   - bytes/live-entry: for ref, Window.MemoryBytes()/N; for every other
//     implementation the growth of runtime.MemStats.HeapAlloc (after a GC on
//     each side) across building the instance and running it to steady state,
//     divided by N. The stream's own buffers are allocated before the first
//     reading and are not counted.
//   - catch-rate: caught retries / retries, counted from the end of the first
//     ttl of warm-up (when the live set is full) to the end of the timed loop,
//     so that it is defined even with -benchtime=1x. Every retry is inside the
//     ttl, so an exact window scores 1: BenchmarkWindowPut fails an exact
//     implementation (ref, gomap) that scores less, or that reports a fresh
//     key as existing. The Parallel variant fails only on the latter: its
//     goroutines run on their own virtual clocks (kept together by
//     Stream.Sync), and a goroutine the OS deschedules between reading its
//     clock and locking comes back further behind than the window's grace
//     period, which here is microseconds of real time; so a few retries can be
//     missed there without a bug (catch-rate shows how many).
//
// Clocks: ref, gomap and otter (through its Clock option) run on the
// stream's virtual time. ristretto and golang-lru read the wall clock
// internally and cannot be given another; their ttl is set to an hour (longer
// than any run, so it never expires an entry) and their capacity to N, which
// bounds their live set at N as the virtual ttl bounds the others'. On this
// workload (fixed time step per operation) "the last ttl" and "the last N
// fresh keys" are the same set, so the comparison is like for like.
func BenchmarkWindowPut(b *testing.B) {
	for _, im := range Impls {
		for _, live := range Lives {
			b.Run(fmt.Sprintf("impl=%s/live=%d", im.Name, live), func(b *testing.B) {
				f := getFixture(b, im, live)
				d, s := f.d, f.s
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					k, now, retry := s.Next()
					s.Record(retry, d.Put(k, k^valSalt, now))
				}
				b.StopTimer()
				report(b, im, live, f.bytes, s.Retries, s.Caught, s.FalseHits, true)
			})
		}
	}
}

// BenchmarkWindowPutParallel runs one stream per goroutine of b.RunParallel
// (GOMAXPROCS of them) against one shared instance. Each stream's virtual
// time advances GOMAXPROCS steps per operation, so together they keep the
// live set at live; their clocks differ slightly, as concurrent callers' do,
// and Sync keeps them together. A retry can still be missed here without a
// bug: a goroutine the OS deschedules between reading its clock and locking
// comes back with a now far behind the others (the virtual ttl spans only
// milliseconds of real time), beyond what the window's grace period covers.
// So missed retries do not fail this benchmark (catch-rate shows them); a
// fresh key reported as existing does. The single-goroutine benchmark and
// ref's tests check exactness.
func BenchmarkWindowPutParallel(b *testing.B) {
	for _, im := range Impls {
		for _, live := range Lives {
			b.Run(fmt.Sprintf("impl=%s/live=%d", im.Name, live), func(b *testing.B) {
				// GOMAXPROCS is read here, in the sub-benchmark: with -cpu
				// 1,2 the testing package runs this function once and each
				// sub-benchmark at each -cpu value, so a value read outside
				// was 2 at -cpu 1, and the one goroutine then ran a stream
				// of half the rate (step 2*Step): half the live set, a
				// lighter table, and a 1-CPU figure too good by a third.
				p := runtime.GOMAXPROCS(0)
				f := getFixture(b, im, live)
				d, s0 := f.d, f.s
				// Streams are built before the timer starts (their rings are
				// live/2 keys each); each goroutine takes one.
				streams := make([]*Stream, p)
				for i := range streams {
					streams[i] = newPaddedStream(newStreamID(), live, Step*time.Duration(p))
					streams[i].SetNow(s0.Now())
				}
				var next, clock atomic.Int64
				clock.Store(s0.Now().UnixNano())
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					s := streams[next.Add(1)-1]
					for i := 0; pb.Next(); i++ {
						if i%SyncEvery == 0 {
							s.Sync(&clock)
						}
						k, now, retry := s.Next()
						s.Record(retry, d.Put(k, k^valSalt, now))
					}
				})
				b.StopTimer()
				s0.SetNow(time.Unix(0, clock.Load())) // a reused fixture goes on from here
				retries, caught, falseHits := s0.Retries, s0.Caught, s0.FalseHits
				for _, s := range streams {
					retries, caught, falseHits = retries+s.Retries, caught+s.Caught, falseHits+s.FalseHits
				}
				report(b, im, live, f.bytes, retries, caught, falseHits, false)
			})
		}
	}
}

// newPaddedStream is NewStream for a goroutine of a parallel benchmark: each
// goroutine writes its stream's fields on every operation, and two streams
// allocated one after the other share a cache line (a Stream is about 160
// bytes), so without padding every operation of every goroutine waited for
// that line to come over from the other core: the harness, not the window,
// then set the ns/op of a fast implementation (ref did not scale at all at 2
// CPUs, while a bare loop over the same window did, 1.7x). 128 bytes on each
// side keep a stream off the lines, and off the pairs of lines x86 fetches
// together, of whatever is allocated next to it.
func newPaddedStream(id uint64, live int, step time.Duration) *Stream {
	p := &struct {
		_ [128]byte
		s Stream
		_ [128]byte
	}{s: *NewStream(id, live, step)}
	return &p.s
}

// lookupKeys is the live set of BenchmarkWindowLookup and of
// BenchmarkSettle/path=windowdup: the reference size.
const lookupKeys = 131072

// BenchmarkWindowLookup measures ref.Window.Lookup hitting one of 131072
// live keys, in a pseudo-random order (the same keys and order as
// BenchmarkSettle/path=windowdup, so the two differ only by the Settler).
func BenchmarkWindowLookup(b *testing.B) {
	w := ref.NewWindow(time.Hour, RefShards)
	for i := range lookupKeys {
		w.Put(mix64(uint64(i)), 0, Epoch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := mix64(uint64(mix64(uint64(i)) % lookupKeys))
		if _, ok := w.Lookup(k, Epoch.Add(time.Duration(i))); !ok {
			b.Fatalf("live key %#x missed (go test -run='^$' -bench=BenchmarkWindowLookup ./bench/)", k)
		}
	}
}
