package bench

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/maypok86/otter/v2"

	"github.com/onceproof/onceproof/impls/sharded"
	"github.com/onceproof/onceproof/ref"
)

// Dedup is what every benchmarked window does: Put reports whether key was
// already there (a caught retry), inserting it otherwise.
type Dedup interface {
	Put(key, val uint64, now time.Time) (existed bool)
	Close()
}

// Impl is one implementation in the benchmark tables.
type Impl struct {
	Name string
	// New builds an empty instance sized for a live set of live keys under
	// ttl (virtual time; wall-clock implementations ignore it, see BenchmarkWindowPut).
	New func(live int, ttl time.Duration) Dedup
	// Exact implementations must catch every in-ttl retry and never report a
	// fresh key: the benchmark fails otherwise.
	Exact bool
}

// RefShards is the shard count of the ref window in every benchmark: a few
// locks per core on machines of 2 to 8 cores (16 locks: 8 per core on 2, 2
// per core on 8), so the Parallel variant rarely contends; a single
// goroutine pays the same one lock per operation whatever the count.
const RefShards = 16

// PeerTTL is the wall-clock ttl given to ristretto and golang-lru, which read
// the wall clock themselves: longer than any benchmark run, so capacity (N),
// not time, bounds their live set (see BenchmarkWindowPut).
const PeerTTL = time.Hour

// Impls lists the implementations BenchmarkWindowPut and
// BenchmarkWindowPutParallel run, ref first.
var Impls = []Impl{
	{Name: "ref", New: newRef, Exact: true},
	{Name: "sharded", New: newSharded, Exact: true},
	{Name: "gomap", New: newGoMap, Exact: true},
	{Name: "otter", New: newOtter},
	{Name: "ristretto", New: newRistretto},
	{Name: "lru", New: newLRU},
}

// MemoryReporter is implemented by instances that know their own size.
type MemoryReporter interface{ MemoryBytes() int }

// settler is implemented by instances with asynchronous writes; Settle
// applies the pending ones (before a memory reading).
type settler interface{ Settle() }

type refDedup struct{ w *ref.Window }

func newRef(live int, ttl time.Duration) Dedup { return refDedup{ref.NewWindow(ttl, RefShards)} }

func (r refDedup) Put(key, val uint64, now time.Time) bool {
	_, existed := r.w.Put(key, val, now)
	return existed
}
func (r refDedup) Close()           {}
func (r refDedup) MemoryBytes() int { return r.w.MemoryBytes() }

// shardedDedup is the window of the design "sharded" (impls/sharded): 8
// shards of Go maps with per-shard expiry queues, a ref.Memory as ref's
// Window is, so Put is its own.
type shardedDedup struct{ w *sharded.MapWindow }

func newSharded(live int, ttl time.Duration) Dedup {
	return shardedDedup{sharded.NewMapWindow(ttl)}
}

func (s shardedDedup) Put(key, val uint64, now time.Time) bool {
	_, existed := s.w.Put(key, val, now)
	return existed
}
func (s shardedDedup) Close() {}

type goMapDedup struct{ g *GenMap }

func newGoMap(live int, ttl time.Duration) Dedup { return goMapDedup{NewGenMap(ttl, live)} }

func (g goMapDedup) Put(key, val uint64, now time.Time) bool {
	_, existed := g.g.Put(key, val, now)
	return existed
}
func (g goMapDedup) Close() {}

// virtualClock feeds the stream's virtual time to otter. It never ticks, so
// otter runs no periodic clean-up goroutine: expired entries go during its
// write-path maintenance.
type virtualClock struct{ ns atomic.Int64 }

func (c *virtualClock) NowNano() int64                      { return c.ns.Load() }
func (c *virtualClock) Tick(time.Duration) <-chan time.Time { return nil }

// otterClockGranule: the clock is written only when it moved this much, so
// parallel goroutines do not all write one cache line per operation (which
// would charge otter for the harness). 64 steps is 64 operations: at least 17x
// finer than the smallest ttl here (1138 steps), so entries expire at most
// 6% of a ttl late.
const otterClockGranule = 64 * int64(Step)

type otterDedup struct {
	c   *otter.Cache[uint64, uint64]
	clk *virtualClock
}

func newOtter(live int, ttl time.Duration) Dedup {
	clk := &virtualClock{}
	clk.ns.Store(Epoch.UnixNano())
	c, err := otter.New(&otter.Options[uint64, uint64]{
		ExpiryCalculator: otter.ExpiryWriting[uint64, uint64](ttl),
		Clock:            clk,
		InitialCapacity:  live,
	})
	if err != nil {
		panic(fmt.Sprintf("bench: otter.New: %v", err))
	}
	return otterDedup{c, clk}
}

func (o otterDedup) Put(key, val uint64, now time.Time) bool {
	if t := now.UnixNano(); t >= o.clk.ns.Load()+otterClockGranule {
		o.clk.ns.Store(t)
	}
	_, inserted := o.c.SetIfAbsent(key, val)
	return !inserted
}
func (o otterDedup) Close() { o.c.StopAllGoroutines(); o.c.InvalidateAll() }

type ristrettoDedup struct {
	c *ristretto.Cache[uint64, uint64]
}

func newRistretto(live int, _ time.Duration) Dedup {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, uint64]{
		NumCounters:        int64(10 * live), // ristretto's advice: 10x the items
		MaxCost:            int64(live),      // cost 1 per key: at most live keys
		BufferItems:        64,               // ristretto's advice
		IgnoreInternalCost: true,
	})
	if err != nil {
		panic(fmt.Sprintf("bench: ristretto.NewCache: %v", err))
	}
	return ristrettoDedup{c}
}

// Put is Get then SetWithTTL. Ristretto's Set is asynchronous (buffered, and
// dropped when the buffer is full or the admission policy rejects the key).
// The hot loop does not call Wait: a dedup window's Put must return at once,
// and a retry comes many operations later, by when the set has been applied if
// it ever will be. Wait is called only before a memory reading (Settle), so
// the reading counts what the cache holds.
func (r ristrettoDedup) Put(key, val uint64, now time.Time) bool {
	if _, ok := r.c.Get(key); ok {
		return true
	}
	r.c.SetWithTTL(key, val, 1, PeerTTL)
	return false
}
func (r ristrettoDedup) Settle() { r.c.Wait() }
func (r ristrettoDedup) Close()  { r.c.Close() }

type lruDedup struct {
	c *expirable.LRU[uint64, uint64]
}

func newLRU(live int, _ time.Duration) Dedup {
	return lruDedup{expirable.NewLRU[uint64, uint64](live, nil, PeerTTL)}
}

func (l lruDedup) Put(key, val uint64, now time.Time) bool {
	if _, ok := l.c.Get(key); ok {
		return true
	}
	l.c.Add(key, val)
	return false
}

// Close empties the cache: expirable.LRU's clean-up goroutine never exits in
// v2.0.7 and keeps the cache reachable, so without Purge every benchmark run
// would leave its entries on the heap for the next ones to scan.
func (l lruDedup) Close() { l.c.Purge() }

// Build makes an instance of im for live keys, runs warm on it, and returns
// it with its size in bytes: MemoryBytes if it reports one, else the growth of
// the live heap across building and warming (runtime.GC before each reading).
func Build(im Impl, live int, warm func(Dedup)) (Dedup, int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := im.New(live, TTL(live))
	warm(d)
	if s, ok := d.(settler); ok {
		s.Settle()
	}
	if m, ok := d.(MemoryReporter); ok {
		return d, int64(m.MemoryBytes())
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return d, int64(after.HeapAlloc) - int64(before.HeapAlloc)
}
