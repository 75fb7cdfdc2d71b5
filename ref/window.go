package ref

import (
	"fmt"
	"sync"
	"time"
)

// Window is an exact, bounded, in-memory idempotency window.
//
// PLACEHOLDER IMPLEMENTATION (a Go map per shard); the open-addressing
// version replaces it. The contract below is what every version keeps.
//
// Contract: an entry put at t is visible while now < t+ttl and gone when
// now >= t+ttl. Put on a live key changes nothing (the first put's value and
// time stand) and reports the live value. Memory follows the live set, never
// the history. Safe for concurrent use; keys are spread over shards.
type Window struct {
	ttl    time.Duration
	shards []windowShard
	mask   uint64
}

type windowShard struct {
	mu sync.Mutex
	m  map[uint64]windowEntry
	n  int
}

type windowEntry struct {
	val uint64
	exp int64
}

// NewWindow returns a window whose entries live for ttl, spread over shards
// locks (rounded up to a power of two). It panics if ttl <= 0 or shards < 1.
func NewWindow(ttl time.Duration, shards int) *Window {
	if ttl <= 0 {
		panic(fmt.Sprintf("ref.NewWindow: ttl must be > 0, got %v", ttl))
	}
	if shards < 1 {
		panic(fmt.Sprintf("ref.NewWindow: shards must be >= 1, got %d", shards))
	}
	n := 1
	for n < shards {
		n <<= 1
	}
	w := &Window{ttl: ttl, shards: make([]windowShard, n), mask: uint64(n - 1)}
	for i := range w.shards {
		w.shards[i].m = make(map[uint64]windowEntry)
	}
	return w
}

// TTL returns the window's ttl.
func (w *Window) TTL() time.Duration { return w.ttl }

func (w *Window) shard(key uint64) *windowShard {
	return &w.shards[(key*0x9E3779B97F4A7C15)>>32&w.mask]
}

// Put inserts key with val at now unless key is live, and reports the live
// value if there was one.
func (w *Window) Put(key, val uint64, now time.Time) (prev uint64, existed bool) {
	t := now.UnixNano()
	s := w.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; ok && t < e.exp {
		return e.val, true
	}
	s.m[key] = windowEntry{val: val, exp: t + int64(w.ttl)}
	s.n++
	if s.n >= len(s.m) {
		for k, e := range s.m {
			if t >= e.exp {
				delete(s.m, k)
			}
		}
		s.n = 0
	}
	return 0, false
}

// Lookup returns key's value if key is live at now.
func (w *Window) Lookup(key uint64, now time.Time) (val uint64, ok bool) {
	t := now.UnixNano()
	s := w.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; ok && t < e.exp {
		return e.val, true
	}
	return 0, false
}

// Len returns how many entries the window holds now, live or not yet
// reclaimed.
func (w *Window) Len() int {
	n := 0
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
