package bench

import (
	"fmt"
	"sync/atomic"
	"time"
)

// RetryPercent is the share of operations that retry a recent key. 10% is the
// issue's workload: most traffic is fresh, and the retries are what a window
// exists for.
const RetryPercent = 10

// Step is the virtual time between two operations of one stream. Its size
// does not matter to an exact window (only ratios of times do); 1µs keeps
// every ttl used here (N*Step*10/9 <= 1.2s) far from int64 limits.
const Step = time.Microsecond

// Epoch is the virtual time every stream starts at; nothing here reads the
// wall clock for the stream's time.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TTL returns the ttl under which a stream with step Step keeps live keys
// live: fresh keys arrive at (100-RetryPercent)% of operations, so a ttl of
// live*100/(100-RetryPercent) operations holds live fresh keys.
func TTL(live int) time.Duration {
	return time.Duration(live) * Step * 100 / (100 - RetryPercent)
}

// WarmOps is how many operations bring a window from empty to its steady
// state: one full ttl (the live set is full after it) plus an eighth, so every
// implementation has also expired or evicted some keys before it is measured.
func WarmOps(live int) int {
	return live*100/(100-RetryPercent) + live/8
}

// Stream is a deterministic stream of fingerprints: fresh keys are distinct
// 64-bit values (a bijective mix of a counter and the stream id), retries
// repeat one of the last `recent` fresh keys. It is seeded by its id and uses
// no global randomness, so two runs see the same keys in the same order.
//
// The workload of every window benchmark is one such stream: 90% fresh, 10%
// retries of one of the last N/2 fresh keys (always inside the ttl), with
// virtual time advancing by a fixed step per operation so that the live set
// (distinct keys put within the last ttl) stays at N.
type Stream struct {
	rng    uint64
	id     uint64
	fresh  uint64 // fresh keys issued
	ring   []uint64
	at     []int64 // virtual put time of ring[i] (UnixNano)
	mask   uint64
	recent uint64
	ns     int64 // virtual now (UnixNano)
	sec    int64 // ns split as time.Unix takes it: sec*1e9 + nsec, nsec in [0, 1e9)
	nsec   int64
	step   int64 // ns per operation
	ttl    int64
	// jumped is set once the clock has jumped (Sync, SetNow): from then on a
	// retry candidate may be older than the ttl and Next checks its age. A
	// stream on its own clock never needs the check (its recent keys are
	// about ttl/2 old), so the single-goroutine loop skips reading at[].
	jumped bool

	// Retries counts retries issued since the last ResetCounts, Caught those
	// the window reported as existing, FalseHits fresh keys it reported as
	// existing (an exact window has none).
	Retries, Caught, FalseHits int
}

// NewStream returns stream id for a window of the given live size. step is
// the virtual time per operation (Step, or Step*P for each of P parallel
// streams sharing one window, so that together they keep the live set at
// live).
func NewStream(id uint64, live int, step time.Duration) *Stream {
	if live < 2 {
		panic(fmt.Sprintf("bench.NewStream: live must be >= 2, got %d", live))
	}
	if id >= 1<<16 {
		panic(fmt.Sprintf("bench.NewStream: id must be < 65536, got %d", id))
	}
	if step < Step || step%Step != 0 {
		panic(fmt.Sprintf("bench.NewStream: step must be a multiple of %v, got %v", Step, step))
	}
	// recent: the largest power of two <= live/2 / (step/Step). A retry of one
	// of the last live/2 fresh keys of all streams together is about ttl/2
	// old, well inside the ttl, for every implementation, including the
	// capacity-bounded ones; a stream running at step = P*Step issues 1/P of
	// those keys.
	r := uint64(1)
	for r*2 <= uint64(live/2)/uint64(step/Step) {
		r *= 2
	}
	return &Stream{
		rng:  mix64(id + 1),
		id:   id,
		ring: make([]uint64, r), at: make([]int64, r), mask: r - 1, recent: r,
		ns: Epoch.UnixNano(), sec: Epoch.Unix(), nsec: int64(Epoch.Nanosecond()),
		step: int64(step), ttl: int64(TTL(live)),
	}
}

// mix64 is splitmix64's finaliser, a bijection on uint64.
func mix64(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// Next advances virtual time by one step and returns the next key, the time
// to use, and whether it is a retry.
func (s *Stream) Next() (key uint64, now time.Time, retry bool) {
	// The clock is kept as integers and the time.Time built from them
	// (time.Unix with nsec already in [0, 1e9) does no arithmetic):
	// time.Time.Add cost about 6 ns per operation, and time.Unix(0, ns) 3 ns
	// (a division), harness time every implementation paid.
	s.ns += s.step
	s.nsec += s.step
	for s.nsec >= 1e9 {
		s.sec++
		s.nsec -= 1e9
	}
	now = time.Unix(s.sec, s.nsec)
	s.rng = s.rng*6364136223846793005 + 1442695040888963407 // 64-bit LCG
	r := s.rng >> 32                                        // the LCG's good bits
	// r*100>>32 is uniform on [0,100) for a uniform 32-bit r (multiply-shift:
	// no division in the timed loop, which every implementation pays for).
	if r*100>>32 < RetryPercent && s.fresh > 0 {
		// back: uniform on [0, min(fresh, recent)). After the first recent
		// fresh keys (all of warm-up's second half and every timed op) that is
		// a mask of the LCG's next bits; a division (tens of cycles, which
		// every implementation would pay on every retry) only before.
		var back uint64
		if s.fresh >= s.recent {
			back = s.rng >> 16 & s.mask
		} else {
			back = (s.rng >> 16) % s.fresh
		}
		i := (s.fresh - 1 - back) & s.mask
		// Always true for a stream on its own clock (recent keys are about
		// ttl/2 old); a parallel stream whose clock jumped forward in Sync
		// sends a fresh key instead of a retry outside the ttl.
		if !s.jumped || s.ns-s.at[i] < s.ttl {
			return s.ring[i], now, true
		}
	}
	// Fresh keys: mix64 of (stream id, counter) is distinct across streams
	// (the id has the top 16 bits) and within one.
	key = mix64(s.id<<48 | s.fresh)
	i := s.fresh & s.mask
	s.ring[i], s.at[i] = key, s.ns
	s.fresh++
	return key, now, false
}

// Record counts the outcome of one operation for the catch rate.
func (s *Stream) Record(retry, existed bool) {
	switch {
	case retry:
		s.Retries++
		if existed {
			s.Caught++
		}
	case existed:
		s.FalseHits++
	}
}

// ResetCounts zeroes Retries, Caught and FalseHits.
func (s *Stream) ResetCounts() { s.Retries, s.Caught, s.FalseHits = 0, 0, 0 }

// Now returns the stream's current virtual time.
func (s *Stream) Now() time.Time { return time.Unix(0, s.ns) }

// SyncEvery is how many operations a parallel stream runs between Syncs:
// one atomic load per 64 operations costs nothing measurable, and bounds how
// far apart the streams' clocks drift to 64 operations each, plus however
// long the OS keeps a goroutine off its core.
const SyncEvery = 64

// Sync keeps parallel streams' virtual clocks together: each publishes its
// time to shared and jumps forward to it when it lags (a goroutine the OS
// descheduled would otherwise fall behind for good, and its entries would
// look expired to the others).
func (s *Stream) Sync(shared *atomic.Int64) {
	own, cur := s.ns, shared.Load()
	switch {
	case own < cur:
		s.setNS(cur)
	case own > cur:
		shared.CompareAndSwap(cur, own)
	}
}

// SetNow moves the stream's virtual time (parallel streams start where the
// warm-up stream ended).
func (s *Stream) SetNow(t time.Time) { s.setNS(t.UnixNano()) }

func (s *Stream) setNS(ns int64) {
	s.ns, s.sec, s.nsec, s.jumped = ns, ns/1e9, ns%1e9, true
}
