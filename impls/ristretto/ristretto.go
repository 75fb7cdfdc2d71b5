// Package ristretto is the row "ristretto" of the design matrix: ref's
// Settler (source 000's three layers with ref's fixes) with a
// github.com/dgraph-io/ristretto/v2 cache as the window, the cache a team
// would reach for first. It holds everywhere because the window only speeds
// up what the durable store decides: the fresh, once-seen keys its admission
// policy (TinyLFU) and lossy buffers drop are caught by the store instead, so
// the cost is speed (Stats, on the cluster: its catch rate), not correctness.
// Admission samples with Go map iteration, so its histories are not
// reproducible event for event; its verdicts are (the store decides them).
// Window says how it departs from a plain cache.
package ristretto

import (
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "ristretto"

// maxEntries is each node's cache capacity, in entries (cost 1 each). A
// generated schedule keeps up to about 20 settlements inside the ttl on a
// node (3 players x 2.5 matches x 2..3 kinds); 8 is below that on purpose:
// caches are sized by memory, not by rate x ttl, and the design must hold
// when the cache is too small. NewWindow sets NumCounters to 10 x the
// entries, ristretto's documented ratio; bufferItems 64 is its documented
// default.
const (
	maxEntries  = 8
	bufferItems = 64
)

// Design is the ristretto-window design.
type Design struct{}

var _ faults.Declarer = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// Declare implements faults.Declarer: it holds everywhere.
func (Design) Declare() faults.Declaration {
	return faults.Declaration{Doc: "ref's Settler (source 000's layers with ref's fixes) with a `dgraph-io/ristretto/v2` cache " +
		"(8 entries, expiry kept in the value in virtual time) as the window. It holds everywhere because the store " +
		"catches every key the cache's admission policy drops; what the cache costs is its catch rate, not correctness.",
		Varies: "ristretto's admission samples with Go map iteration, so which duplicates the cache catches differs from run to run"}
}

// NewCluster implements faults.Design. The cluster's caches are closed
// when a crashed node is replaced and, for the last ones, when the run ends
// (faults.ClusterCloser): ristretto runs goroutines per cache, and a matrix
// builds hundreds of thousands of clusters.
func (Design) NewCluster() faults.Cluster {
	reg := &registry{caches: map[int]*Window{}}
	return &Cluster{Cluster: refdesign.NewCluster(ref.NewMemStore(), func(node int) refdesign.Window { return reg.replace(node) }), reg: reg}
}

// Cluster is ref's cluster with ristretto windows, which it closes when the
// run ends.
type Cluster struct {
	*refdesign.Cluster
	reg *registry
}

var _ faults.ClusterCloser = (*Cluster)(nil)

// Close implements faults.ClusterCloser: it stops every cache's goroutines.
func (c *Cluster) Close() { c.reg.closeAll() }

// registry holds each node id's live cache so a replaced one is closed.
type registry struct {
	mu     sync.Mutex
	caches map[int]*Window
}

func (r *registry) replace(node int) *Window {
	w := NewWindow(faults.WindowTTL, maxEntries)
	r.mu.Lock()
	old := r.caches[node]
	r.caches[node] = w
	r.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return w
}

func (r *registry) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, w := range r.caches {
		w.Close()
		delete(r.caches, id)
	}
}

// entry is a cached key's value (the key's other 64 bits) and its virtual
// expiry.
type entry struct {
	val uint64
	exp int64
}

// Window is a ristretto cache used as a dedup window.
//
// Two departures from a plain cache, both forced by the harness:
//
//   - no TTL in ristretto: its expiry reads the wall clock. The entry's
//     value keeps its expiry in virtual time and Lookup compares it with now;
//     an expired entry stays until the cache evicts it, within MaxCost.
//   - Set is asynchronous in ristretto; Put calls Wait so a put is
//     visible to the next delivery, as a window must be.
type Window struct {
	ttl   time.Duration
	cache *ristretto.Cache[uint64, entry]
	max   int
}

var _ refdesign.Window = (*Window)(nil)

// NewWindow returns a window of at most max entries living ttl. It panics
// on a configuration ristretto rejects (a programming error).
func NewWindow(ttl time.Duration, max int) *Window {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, entry]{
		NumCounters:        int64(10 * max),
		MaxCost:            int64(max),
		BufferItems:        bufferItems,
		IgnoreInternalCost: true,
		// The key is already a uniform hash (a SHA-256 prefix).
		KeyToHash: func(k uint64) (uint64, uint64) { return k, 0 },
	})
	if err != nil {
		panic(fmt.Sprintf("ristretto.NewWindow: %v", err))
	}
	return &Window{ttl: ttl, cache: c, max: max}
}

// Lookup implements ref.Memory.
func (w *Window) Lookup(fp uint64, now time.Time) (uint64, bool) {
	if e, ok := w.cache.Get(fp); ok && now.UnixNano() < e.exp {
		return e.val, true
	}
	return 0, false
}

// Put implements ref.Memory. ristretto's Set is asynchronous: Wait makes
// the entry visible to the next delivery, as a window must. A live entry is
// kept as it is (its first put's time and value stand, as in ref.Window).
func (w *Window) Put(fp, val uint64, now time.Time) (uint64, bool) {
	if e, ok := w.Lookup(fp, now); ok {
		return e, true
	}
	w.cache.Set(fp, entry{val: val, exp: now.UnixNano() + int64(w.ttl)}, 1)
	w.cache.Wait()
	return 0, false
}

// Live implements refdesign.Window: the cost in use, i.e. the entries the
// cache holds (at cost 1 each), expired ones included until it evicts them:
// a cache cannot tell them apart, so this counts what it keeps.
func (w *Window) Live(time.Time) int { return int(w.cache.MaxCost() - w.cache.RemainingCost()) }

// TTL implements refdesign.Window.
func (w *Window) TTL() time.Duration { return w.ttl }

// Bound declares the cache's capacity, MaxCost entries, as its bound: a
// cache is sized by memory, not by rate x ttl.
func (w *Window) Bound(faults.Load) int { return w.max }

// Close stops the cache's goroutine.
func (w *Window) Close() { w.cache.Close() }
