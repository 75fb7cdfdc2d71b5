package ref

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"
	"unsafe"
)

// Window is an exact, bounded, in-memory idempotency window.
//
// Contract: an entry put at t is visible while now < t+ttl and gone when
// now >= t+ttl, to the nanosecond. Put on a live key changes nothing (the
// first put's value and time stand) and reports the live value; Put on an
// absent or expired key stores (val, now). Memory follows the live set
// (rate x ttl), never the history: expired entries are reclaimed by later
// puts. Safe for concurrent use; keys are spread over shards, each under its
// own mutex. Put and Lookup allocate nothing in steady state (a table grows or
// shrinks only when the live set does).
//
// Callers may pass a now that goes slightly backwards (clock reads racing to
// a shard's lock): visibility is always decided by comparing that now with the
// entry's stored expiry, and an entry is reclaimed only once it has been
// expired for a grace period (min(ttl/64, 1s)), so a caller up to that much
// behind still sees every entry that is live at its now.
//
// # Layout
//
// Each shard is a bucketed cuckoo hash table: buckets of 8 slots, two
// candidate buckets per key (both derived from one bijective mix of the key,
// reduced to the bucket count by Lemire's multiply-shift, so the bucket
// count need not be a power of two). A key lives in one of its two buckets, so
// a lookup reads at most two buckets and never walks a chain. A slot whose
// entry has expired is as good as an empty one for an insert: reclaiming an
// expired entry is free, there are no tombstones, and no sweep is needed for
// correctness. A slot is 24 bytes (key, expiry, value) stored as three
// 8-wide arrays per bucket, so the keys of a bucket are one 64-byte cache
// line and the expiries the next one.
type Window struct {
	ttl      time.Duration
	grace    int64
	sliceLen int64 // ceil((ttl+grace)/(windowSlices-1)), see windowSlices
	shards   []windowShard
	mask     uint64
}

// windowSlots is the number of slots per bucket. 8 keys fill one 64-byte cache
// line, and cuckoo hashing with two choices of 8-slot buckets stays insertable
// to a load of about 0.99 (Erlingsson, Manasse, McSherry, "A cool and practical
// alternative to traditional hash tables", 2006), far above windowGrowLoad, so
// kick walks stay short at every load the table runs at.
const windowSlots = 8

// Load thresholds, as fractions of a shard's slots held by unreclaimable
// entries (live, or expired less than the grace period ago). A slot is 24
// bytes, so bytes per held entry = 24 / load:
//   - windowTargetLoad 0.82 is where a resize puts the load: 29.3 B.
//   - windowGrowLoad 0.92: when the shard's held-entry estimate (see
//     windowSlices) passes it, the shard is rebuilt at the target load. The
//     estimate is an upper bound, at most 1/(windowSlices-1) = 3.2% high at a
//     steady rate, so in steady state the true load sits in [0.79, 0.92]:
//     26.1..30.4 B per held entry, 26.5..30.9 B per live entry with the grace
//     period's 1/64, under the 32 B budget. The shard headers (256 B each,
//     4 KB for 16 shards) come on top: 4 B per entry at 1024 live entries,
//     0.03 B at 131072. 0.92 is far below the (2,8)-cuckoo limit
//     of 0.99, where kick walks get long.
//   - windowShrinkLoad 0.30: below it the shard is rebuilt at the target load,
//     so a table sized for a past peak is given back once the rate drops (the
//     hysteresis 0.30 < 0.82 keeps a rate that wobbles around one size from
//     resizing back and forth).
//
// Do not raise windowGrowLoad without redoing the kick walk bound below, nor
// lower windowTargetLoad without redoing the 32 B budget.
const (
	windowTargetNum, windowTargetDen = 82, 100
	windowGrowNum, windowGrowDen     = 92, 100
	windowShrinkNum, windowShrinkDen = 30, 100
)

// windowSlices is the number of time slices over which a shard counts its
// inserts to bound, without scanning, how many entries it holds: every held
// entry was put (or renewed) less than ttl+grace ago, so the inserts counted
// in the slices covering the last ttl+grace are an upper bound. The slices are
// (ttl+grace)/(windowSlices-1) long, so windowSlices of them always cover it,
// and the bound overcounts by at most one slice's inserts: 1/31 = 3.2% at a
// steady rate. 32 counters cost 256 bytes per shard; the slice index is
// recomputed (one division) only when a slice ends.
const windowSlices = 32

// windowMaxKicks bounds a cuckoo kick walk. At load <= 0.92 with (2,8)
// buckets a walk ends in one or two kicks on average; 128 consecutive full
// buckets is a sign the table is too full (or unlucky), and the shard is
// rebuilt one size larger instead of walking on.
const windowMaxKicks = 128

// windowMinBuckets is the smallest table: two buckets so a key's two choices
// differ. A shard allocates it on its first put.
const windowMinBuckets = 2

// windowEmptyExp marks an empty slot: every cut-off is >= it, so an empty slot
// is always reclaimable and never held or visible.
const windowEmptyExp = math.MinInt64

// windowGraceMax and windowGraceDiv fix the grace period: an expired entry is
// reclaimed only once now >= expiry + grace. Backwards steps of now come from
// clock reads racing to a lock: microseconds, milliseconds under preemption.
// min(ttl/64, 1s) covers a thousand times that for any ttl above a minute,
// and keeps an entry at most 1/64 longer than its ttl (1.6% more memory).
const (
	windowGraceDiv = 64
	windowGraceMax = int64(time.Second)
)

type windowBucket struct {
	keys [windowSlots]uint64
	exps [windowSlots]int64 // expiry (put time + ttl, saturated); windowEmptyExp if empty
	vals [windowSlots]uint64
}

type windowShardState struct {
	// Every Put writes the mutex and the estimate's counters and reads the
	// thresholds, so they share the mutex's cache line (8 words, 64 bytes;
	// checked below): a Put on a core that did not hold the shard last pulls
	// over that one line. With the current slice's count in counts[cur] (an
	// array on the next lines) every Put wrote a second line too: at 2
	// goroutines on 2 cores a Put took 95 ns against 71 ns with curN here
	// (BenchmarkWindowPutParallel at live=131072, one run; 1 goroutine: 66 ns
	// either way).
	mu       sync.Mutex // 8 bytes
	used     int        // slots with key != 0 (held, or expired and not yet overwritten)
	est      int        // held-entry estimate: sum of counts, plus curN
	curN     int        // inserts in the current slice, added to counts[cur] when it ends
	growAt   int        // est above it grows the shard (windowGrowLoad of its slots)
	shrinkAt int        // est below it shrinks the shard (windowShrinkLoad of its slots)
	sliceEnd int64      // end (exclusive, UnixNano) of the current slice
	rng      uint64     // kick victim choice; deterministic (no global randomness)

	// Read by every Put, written only by a resize, so its line stays shared
	// between cores.
	b []windowBucket

	// Inserts per past time slice (see windowSlices), for the held-entry
	// estimate; written when a slice ends.
	cur int // index in counts of the current slice
	// int32: a count is the inserts of one slice; 2^31 of them would mean a
	// live set of 31*2^31 entries in one shard, terabytes of table.
	counts [windowSlices]int32

	// Key 0 is a normal key, but 0 marks an empty slot, so key 0 has its own
	// slot here.
	zeroSet bool
	zeroExp int64
	zeroVal uint64
}

// The fields every Put writes fit the mutex's cache line: this does not
// compile if b starts past byte 64.
var _ [64 - unsafe.Offsetof(windowShardState{}.b)]byte

// windowShard pads the state to its own cache lines so two cores locking
// neighbouring shards do not bounce one line between them.
type windowShard struct {
	windowShardState
	_ [64 - unsafe.Sizeof(windowShardState{})%64]byte
}

// NewWindow returns a window whose entries live for ttl, spread over shards
// locks (rounded up to a power of two). It panics if ttl <= 0 or shards < 1
// (or shards > 65536). Tables are allocated on each shard's first put and
// follow the live set from there.
func NewWindow(ttl time.Duration, shards int) *Window {
	if ttl <= 0 {
		panic(fmt.Sprintf("ref.NewWindow: ttl must be > 0, got %v", ttl))
	}
	if shards < 1 {
		panic(fmt.Sprintf("ref.NewWindow: shards must be >= 1, got %d", shards))
	}
	if shards > 1<<16 {
		// 65536 locks is far past any core count; more only wastes memory.
		panic(fmt.Sprintf("ref.NewWindow: shards must be <= 65536, got %d", shards))
	}
	n := 1
	for n < shards {
		n <<= 1
	}
	grace := min(int64(ttl)/windowGraceDiv, windowGraceMax)
	span := satAdd(int64(ttl), grace)
	sliceLen := span/(windowSlices-1) + 1 // > span/(windowSlices-1), so windowSlices slices cover span
	w := &Window{ttl: ttl, grace: grace, sliceLen: sliceLen, shards: make([]windowShard, n), mask: uint64(n - 1)}
	for i := range w.shards {
		w.shards[i].rng = uint64(i)*0x9E3779B97F4A7C15 + 1
	}
	return w
}

// TTL returns the window's ttl.
func (w *Window) TTL() time.Duration { return w.ttl }

// windowMix is the murmur3 64-bit finaliser: a bijection whose every output
// bit depends on every input bit. Keys are usually hashes already, but a key
// built from a counter or a packed id has weak low bits; the mix makes the
// shard (low bits) and both buckets (high bits) independent and uniform.
func windowMix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// homes returns the two candidate buckets of a key with mix h among n
// buckets. The first reduces h's high bits, the second h's bits 31..0 (the
// shard uses the lowest bits, which only feed the second reduction through
// carries), by multiply-shift: floor(x*n/2^64) is uniform on [0,n) for a
// uniform x, with no division and no power-of-two size.
func homes(h uint64, n uint64) (uint64, uint64) {
	b1, _ := bits.Mul64(h, n)
	b2, _ := bits.Mul64(bits.RotateLeft64(h, 32), n)
	if b2 == b1 {
		b2++
		if b2 == n {
			b2 = 0
		}
	}
	return b1, b2
}

func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

func satSub(a, b int64) int64 {
	if s := a - b; s <= a {
		return s
	}
	return math.MinInt64
}

// Put inserts key with val at now unless key is live, and reports the live
// value if there was one.
func (w *Window) Put(key, val uint64, now time.Time) (prev uint64, existed bool) {
	t := now.UnixNano()
	h := windowMix(key)
	s := &w.shards[h&w.mask]
	s.mu.Lock()
	prev, existed = s.put(key, h, val, t, satAdd(t, int64(w.ttl)), satSub(t, w.grace), w.sliceLen)
	s.mu.Unlock()
	return prev, existed
}

// Lookup returns key's value if key is live at now.
func (w *Window) Lookup(key uint64, now time.Time) (val uint64, ok bool) {
	t := now.UnixNano()
	h := windowMix(key)
	s := &w.shards[h&w.mask]
	s.mu.Lock()
	val, ok = s.lookup(key, h, t)
	s.mu.Unlock()
	return val, ok
}

// Len returns how many slots of the window hold an entry: live ones and
// expired ones not yet reclaimed. An expired entry's slot is reused by a later
// insert, and a resize drops it, so Len stays within the tables' capacity,
// which follows the live set.
func (w *Window) Len() int {
	n := 0
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		n += s.used
		if s.zeroSet {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// Live returns how many entries would answer a Lookup at now: those put
// less than ttl before now. Expired entries the window has not reclaimed yet
// are not counted (Len counts them). It takes every shard's lock and scans
// every slot: for tests and state reports, not for the hot path.
func (w *Window) Live(now time.Time) int {
	t := now.UnixNano()
	n := 0
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		if s.zeroSet && t < s.zeroExp {
			n++
		}
		for j := range s.b {
			for k, key := range s.b[j].keys {
				if key != 0 && t < s.b[j].exps[k] {
					n++
				}
			}
		}
		s.mu.Unlock()
	}
	return n
}

// MemoryBytes returns the bytes the window's tables and shard headers occupy
// (not counting the Go allocator's rounding). Divided by the live entries it
// gives bytes per live entry.
func (w *Window) MemoryBytes() int {
	n := int(unsafe.Sizeof(*w)) + len(w.shards)*int(unsafe.Sizeof(windowShard{}))
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		n += cap(s.b) * int(unsafe.Sizeof(windowBucket{}))
		s.mu.Unlock()
	}
	return n
}

func (s *windowShardState) lookup(key, h uint64, t int64) (uint64, bool) {
	if key == 0 {
		if s.zeroSet && t < s.zeroExp {
			return s.zeroVal, true
		}
		return 0, false
	}
	n := uint64(len(s.b))
	if n == 0 {
		return 0, false
	}
	b1, b2 := homes(h, n)
	p := &s.b[b1]
	for i := range p.keys {
		if p.keys[i] == key {
			if t < p.exps[i] {
				return p.vals[i], true
			}
			return 0, false
		}
	}
	q := &s.b[b2]
	for i := range q.keys {
		if q.keys[i] == key {
			if t < q.exps[i] {
				return q.vals[i], true
			}
			return 0, false
		}
	}
	return 0, false
}

// put does Window.Put under the shard lock. exp is the expiry a new entry
// gets; cut is the reclaim cut-off: a slot with expiry <= cut is free.
func (s *windowShardState) put(key, h, val uint64, t, exp, cut, sliceLen int64) (uint64, bool) {
	if key == 0 {
		if s.zeroSet && t < s.zeroExp {
			return s.zeroVal, true
		}
		s.zeroSet, s.zeroExp, s.zeroVal = true, exp, val
		return 0, false
	}
	if len(s.b) == 0 {
		s.sliceEnd = satAdd(t, sliceLen)
		s.rebuild(windowMinBuckets, cut, 0, 0, windowEmptyExp)
	}
	b1, b2 := homes(h, uint64(len(s.b)))
	p, q := &s.b[b1], &s.b[b2]
	// A key is in at most one slot of its two buckets (inserts check both
	// first, kicks move a key only between its two buckets, so it stays
	// unique); an expired entry of the key is renewed in place.
	for i := range p.keys {
		if p.keys[i] == key {
			return s.renew(p, i, val, t, exp, sliceLen)
		}
	}
	for i := range q.keys {
		if q.keys[i] == key {
			return s.renew(q, i, val, t, exp, sliceLen)
		}
	}
	if !s.place(p, key, val, exp, cut) && !s.place(q, key, val, exp, cut) {
		if k, v, e, ok := s.kick(b1, key, val, exp, cut); !ok {
			// Too full: keep the homeless entry and rebuild one size up.
			s.rebuild(s.grown(), cut, k, v, e)
		}
	}
	s.count(t, sliceLen)
	if s.est > s.growAt || s.est < s.shrinkAt {
		s.resize(cut)
	}
	return 0, false
}

func (s *windowShardState) renew(bk *windowBucket, i int, val uint64, t, exp, sliceLen int64) (uint64, bool) {
	if t < bk.exps[i] {
		return bk.vals[i], true
	}
	bk.exps[i], bk.vals[i] = exp, val
	s.count(t, sliceLen) // a held entry with a new put time, as for an insert
	return 0, false
}

// count adds one insert at t to the held-entry estimate. A t behind the
// current slice (a caller whose clock lags) counts in the current slice: its
// entry expires no later than that, so the estimate stays an upper bound.
func (s *windowShardState) count(t, sliceLen int64) {
	if t >= s.sliceEnd {
		s.advance(t, sliceLen)
	}
	s.curN++
	s.est++
}

// advance moves the current slice to the one holding t, forgetting the counts
// of the slices that left the span.
func (s *windowShardState) advance(t, sliceLen int64) {
	// uint64: t - sliceEnd >= 0 but may not fit an int64.
	n := uint64(t-s.sliceEnd)/uint64(sliceLen) + 1
	// The ending slice's count: int32 as counts (curN < 2^31 for the same
	// reason).
	s.counts[s.cur] += int32(s.curN)
	s.curN = 0
	for j := uint64(0); j < min(n, windowSlices); j++ {
		s.cur++
		if s.cur == windowSlices {
			s.cur = 0
		}
		s.est -= int(s.counts[s.cur])
		s.counts[s.cur] = 0
	}
	if n >= math.MaxInt64/uint64(sliceLen) {
		s.sliceEnd = math.MaxInt64
	} else {
		s.sliceEnd = satAdd(s.sliceEnd, int64(n)*sliceLen)
	}
}

// resize rebuilds the shard at the target load; put calls it when the
// held-entry estimate left (shrinkAt, growAt].
func (s *windowShardState) resize(cut int64) {
	// Size by the exact count (a sequential pass over the expiries) so the new
	// table is not oversized by the estimate's slack.
	held := 0
	for bi := range s.b {
		for _, e := range s.b[bi].exps {
			if e > cut {
				held++
			}
		}
	}
	nb := bucketsFor(held)
	if s.est > s.growAt {
		// Growing must take the estimate back under growAt, or the next put
		// would scan again: est*target/grow rounded up gives est <= 0.92 of
		// the new slots.
		nb = max(nb, bucketsFor((s.est*windowTargetNum+windowGrowNum-1)/windowGrowNum), len(s.b)+1)
	}
	if nb != len(s.b) {
		s.rebuild(nb, cut, 0, 0, windowEmptyExp)
		return
	}
	// Only a shrink can land here (growth forces len+1), and only if the
	// estimate undercounts, which it cannot: stop the estimate from
	// triggering a scan on every put all the same.
	s.setThresholds()
	s.shrinkAt = min(s.shrinkAt, s.est-1)
}

// setThresholds sets growAt and shrinkAt for the current table size.
func (s *windowShardState) setThresholds() {
	slots := len(s.b) * windowSlots
	s.growAt = slots * windowGrowNum / windowGrowDen
	s.shrinkAt = -1 // a table at the minimum size never shrinks
	if len(s.b) > windowMinBuckets {
		s.shrinkAt = slots * windowShrinkNum / windowShrinkDen
	}
}

// place stores the entry in the first free slot of bk, if any.
func (s *windowShardState) place(bk *windowBucket, key, val uint64, exp, cut int64) bool {
	for i := range bk.exps {
		if bk.exps[i] <= cut {
			if bk.keys[i] == 0 {
				s.used++
			}
			bk.keys[i], bk.exps[i], bk.vals[i] = key, exp, val
			return true
		}
	}
	return false
}

// kick places an entry whose two buckets (the first is b) are full of held
// entries: it evicts a pseudo-randomly chosen slot of b, takes its place, and
// moves the victim to the victim's other bucket, and so on. It returns ok, or
// the entry left homeless after windowMaxKicks steps.
func (s *windowShardState) kick(b uint64, key, val uint64, exp, cut int64) (uint64, uint64, int64, bool) {
	n := uint64(len(s.b))
	for range windowMaxKicks {
		// 64-bit LCG (Knuth's MMIX constants); its top 3 bits pick the victim.
		s.rng = s.rng*6364136223846793005 + 1442695040888963407
		i := s.rng >> 61
		bk := &s.b[b]
		key, bk.keys[i] = bk.keys[i], key
		exp, bk.exps[i] = bk.exps[i], exp
		val, bk.vals[i] = bk.vals[i], val
		b1, b2 := homes(windowMix(key), n)
		if b1 == b {
			b = b2
		} else {
			b = b1
		}
		if s.place(&s.b[b], key, val, exp, cut) {
			return 0, 0, 0, true
		}
	}
	return key, val, exp, false
}

// grown returns the bucket count after a failed kick walk: an eighth more,
// enough to bring a table at the (2,8) limit back under windowGrowLoad.
func (s *windowShardState) grown() int {
	n := len(s.b)
	return n + n/8 + 1
}

// bucketsFor returns the bucket count that puts held entries at the target
// load.
func bucketsFor(held int) int {
	slots := (held*windowTargetDen + windowTargetNum - 1) / windowTargetNum
	return max((slots+windowSlots-1)/windowSlots, windowMinBuckets)
}

// rebuild moves every held entry (and the carried one, if its expiry is held)
// into a fresh table of nb buckets, dropping expired ones. If a kick walk
// fails there (bad luck at a small size) it starts over one size up; the old
// table stays intact until the new one holds everything.
func (s *windowShardState) rebuild(nb int, cut int64, ck, cv uint64, ce int64) {
	if s.zeroSet && s.zeroExp <= cut {
		s.zeroSet = false
	}
	for {
		t := make([]windowBucket, nb)
		for i := range t {
			for j := range t[i].exps {
				t[i].exps[j] = windowEmptyExp
			}
		}
		old, oldUsed := s.b, s.used
		s.b, s.used = t, 0
		ok := true
		for bi := range old {
			bk := &old[bi]
			for i := range bk.exps {
				if bk.exps[i] > cut && !s.insertNew(bk.keys[i], bk.vals[i], bk.exps[i], cut) {
					ok = false
					break
				}
			}
			if !ok {
				break
			}
		}
		if ok && ce > cut {
			ok = s.insertNew(ck, cv, ce, cut)
		}
		if ok {
			s.setThresholds()
			return
		}
		s.b, s.used = old, oldUsed
		nb += nb/8 + 1
	}
}

// insertNew places a key known to be absent.
func (s *windowShardState) insertNew(key, val uint64, exp, cut int64) bool {
	b1, b2 := homes(windowMix(key), uint64(len(s.b)))
	if s.place(&s.b[b1], key, val, exp, cut) || s.place(&s.b[b2], key, val, exp, cut) {
		return true
	}
	_, _, _, ok := s.kick(b1, key, val, exp, cut)
	return ok
}
