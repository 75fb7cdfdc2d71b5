package sharded

import (
	"sync"
	"time"

	"github.com/onceproof/onceproof/impls/refdesign"
)

// shardCount is the number of shards of MapWindow: a power of two so the
// shard is a mask of the key's hash; 8 is enough that the concurrent family's
// 2..3 goroutines rarely meet on one lock, and sweeping all 8 queues on every
// call (see Len) stays a handful of compares.
const shardCount = 8

// MapWindow is the sharded window: shardCount Go maps, each with a FIFO of
// expiry times. It is a different implementation from ref.Window on purpose
// (the design proves the pipeline does not depend on ref's window):
//
//   - exact: an entry put at t answers while now < t+ttl, never after
//     (each entry keeps its expiry);
//   - bounded: marks are appended to their shard's FIFO in time order, and
//     every call first pops the expired head of every shard, so the maps
//     hold only entries marked within the trailing ttl: at most the distinct
//     settlements the node settled in that span (rate x ttl).
type MapWindow struct {
	ttl    time.Duration
	shards [shardCount]mapShard
}

type mapShard struct {
	mu   sync.Mutex
	m    map[uint64]mapEntry
	fifo []fifoEntry
	head int
}

type mapEntry struct {
	val uint64
	exp int64
}

type fifoEntry struct {
	hi  uint64
	exp int64
}

// NewMapWindow returns an empty window with entries living ttl. It panics if
// ttl <= 0.
func NewMapWindow(ttl time.Duration) *MapWindow {
	if ttl <= 0 {
		panic("sharded.NewMapWindow: ttl must be > 0")
	}
	w := &MapWindow{ttl: ttl}
	for i := range w.shards {
		w.shards[i].m = make(map[uint64]mapEntry)
	}
	return w
}

var _ refdesign.Window = (*MapWindow)(nil)

func (w *MapWindow) shard(fp uint64) *mapShard {
	// The fingerprint is a SHA-256 prefix: its top bits are already uniform.
	return &w.shards[fp>>61]
}

// sweep drops the expired head of the shard's FIFO. Caller holds s.mu.
func (s *mapShard) sweep(t int64) {
	for s.head < len(s.fifo) && s.fifo[s.head].exp <= t {
		f := s.fifo[s.head]
		// Only if the map still holds this mark (a later mark of an
		// expired key replaced it and is queued further back).
		if e, ok := s.m[f.hi]; ok && e.exp == f.exp {
			delete(s.m, f.hi)
		}
		s.head++
	}
	// Compact once the dead prefix is at least half the queue, so the
	// queue's memory also follows the live set.
	if s.head > 0 && s.head*2 >= len(s.fifo) {
		n := copy(s.fifo, s.fifo[s.head:])
		s.fifo = s.fifo[:n]
		s.head = 0
	}
}

// Lookup implements ref.Memory.
func (w *MapWindow) Lookup(fp uint64, now time.Time) (uint64, bool) {
	t := now.UnixNano()
	s := w.shard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(t)
	if e, ok := s.m[fp]; ok && t < e.exp {
		return e.val, true
	}
	return 0, false
}

// Put implements ref.Memory. Putting a live key changes nothing (the first
// put's time and value stand, as in ref.Window).
func (w *MapWindow) Put(fp, val uint64, now time.Time) (uint64, bool) {
	t := now.UnixNano()
	s := w.shard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(t)
	if e, ok := s.m[fp]; ok && t < e.exp {
		return e.val, true
	}
	exp := t + int64(w.ttl)
	s.m[fp] = mapEntry{val: val, exp: exp}
	s.fifo = append(s.fifo, fifoEntry{hi: fp, exp: exp})
	return 0, false
}

// Live implements refdesign.Window: the live entries at now, after sweeping
// every shard.
func (w *MapWindow) Live(now time.Time) int {
	t := now.UnixNano()
	n := 0
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		s.sweep(t)
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// TTL implements refdesign.Window.
func (w *MapWindow) TTL() time.Duration { return w.ttl }
