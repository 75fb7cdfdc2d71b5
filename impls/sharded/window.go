package sharded

import (
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/ref"
)

// Window is what the pipeline needs of an in-memory window. It only ever
// speeds things up: a key it forgets or never takes is caught by the store.
type Window interface {
	// Seen reports whether key was marked and is still live at now.
	Seen(key ref.Key, now time.Time) bool
	// Mark records key at now (the effect of key is durable).
	Mark(key ref.Key, now time.Time)
	// Len is how many entries the window keeps at now.
	Len(now time.Time) int
	// Span and Bound are the window's BoundedState declaration (see
	// faults.Bounded).
	Span() time.Duration
	Bound(l faults.Load) int
}

// shardCount is the number of shards of MapWindow: a power of two so the
// shard is a mask of the key's hash; 8 is enough that the concurrent family's
// 2..3 goroutines rarely meet on one lock, and sweeping all 8 queues on every
// call (see Len) stays a handful of compares.
const shardCount = 8

// MapWindow is the sharded window: shardCount Go maps, each with a FIFO of
// expiry times. It is a different implementation from ref.Window on purpose
// (the design proves the pipeline does not depend on ref's window):
//
//   - exact: an entry marked at t is seen while now < t+ttl, never after
//     (each entry keeps its expiry; the low 64 key bits are kept and
//     compared, so a 64-bit collision is a miss, which the store resolves);
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
	lo  uint64
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

var _ Window = (*MapWindow)(nil)

func (w *MapWindow) shard(hi uint64) *mapShard {
	// The key is a SHA-256 prefix: its top bits are already uniform.
	return &w.shards[hi>>61]
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

// Seen implements Window.
func (w *MapWindow) Seen(key ref.Key, now time.Time) bool {
	t := now.UnixNano()
	s := w.shard(key.Hi)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(t)
	e, ok := s.m[key.Hi]
	return ok && e.lo == key.Lo && t < e.exp
}

// Mark implements Window. Marking a live key changes nothing (the first
// mark's time stands, as in ref.Window).
func (w *MapWindow) Mark(key ref.Key, now time.Time) {
	t := now.UnixNano()
	s := w.shard(key.Hi)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(t)
	if e, ok := s.m[key.Hi]; ok && t < e.exp {
		return
	}
	exp := t + int64(w.ttl)
	s.m[key.Hi] = mapEntry{lo: key.Lo, exp: exp}
	s.fifo = append(s.fifo, fifoEntry{hi: key.Hi, exp: exp})
}

// Len implements Window: the live entries at now, after sweeping every
// shard.
func (w *MapWindow) Len(now time.Time) int {
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

// Span implements Window: the ttl.
func (w *MapWindow) Span() time.Duration { return w.ttl }

// Bound implements Window: one entry per distinct settlement the node
// settled within the trailing ttl.
func (w *MapWindow) Bound(l faults.Load) int { return l.Recent }
