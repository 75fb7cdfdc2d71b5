package bench

import (
	"sync"
	"time"
)

// GenMap is the window a team writes by hand: two generations of Go maps
// under one mutex. Every ttl the current generation becomes the previous one
// and the old previous one is dropped whole, so memory follows the live set
// (at most two ttls of keys), and a lookup checks both generations and the
// stored expiry, so it is exact. It is here as the baseline ref.Window must
// beat; it is correct, just slow (two map probes per operation, a fresh map
// allocated every ttl, one lock).
type GenMap struct {
	mu    sync.Mutex
	ttl   int64
	start int64 // when cur began (UnixNano)
	cur   map[uint64]genEntry
	prev  map[uint64]genEntry
}

type genEntry struct {
	val uint64
	exp int64
}

// NewGenMap returns an empty generational map window with the given ttl,
// its maps sized for hint live entries.
func NewGenMap(ttl time.Duration, hint int) *GenMap {
	return &GenMap{ttl: int64(ttl), cur: make(map[uint64]genEntry, hint), prev: map[uint64]genEntry{}}
}

// Put has ref.Window.Put's contract.
func (g *GenMap) Put(key, val uint64, now time.Time) (uint64, bool) {
	t := now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	if t-g.start >= g.ttl {
		// Every entry of prev was put before the old start, so it expired by
		// now: drop it. The new map is sized like the one it replaces, the
		// hint a careful hand-written window gives.
		g.prev, g.cur, g.start = g.cur, make(map[uint64]genEntry, len(g.cur)), t
	}
	if e, ok := g.cur[key]; ok && t < e.exp {
		return e.val, true
	}
	if e, ok := g.prev[key]; ok && t < e.exp {
		return e.val, true
	}
	g.cur[key] = genEntry{val: val, exp: t + g.ttl}
	return 0, false
}
