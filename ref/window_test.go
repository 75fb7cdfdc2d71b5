package ref

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// winT0 is the window tests' fixed instant; nothing here reads the wall clock.
var winT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// winKey spreads i over 64 bits (splitmix64's finaliser) the way fingerprints
// are spread; winKey(0) is not 0, so tests that want key 0 say so.
func winKey(i uint64) uint64 {
	z := i + 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func TestWindowBoundaryIsExactToTheNanosecond(t *testing.T) {
	const ttl = 90 * time.Second
	for _, shards := range []int{1, 4} {
		w := NewWindow(ttl, shards)
		if _, ok := w.Put(42, 7, winT0); ok {
			t.Fatalf("first Put reported existed (go test -run=TestWindowBoundaryIsExactToTheNanosecond ./ref/)")
		}
		for _, c := range []struct {
			at   time.Duration
			want bool
		}{{0, true}, {1, true}, {ttl - time.Nanosecond, true}, {ttl, false}, {ttl + 1, false}} {
			v, ok := w.Lookup(42, winT0.Add(c.at))
			if ok != c.want || (ok && v != 7) {
				t.Errorf("shards=%d Lookup at t+%v = (%d, %v), want visible=%v (go test -run=TestWindowBoundaryIsExactToTheNanosecond ./ref/)", shards, c.at, v, ok, c.want)
			}
		}
		// Put agrees with Lookup at both sides of the boundary.
		if prev, ok := w.Put(42, 8, winT0.Add(ttl-time.Nanosecond)); !ok || prev != 7 {
			t.Errorf("Put at t+ttl-1ns = (%d, %v), want (7, true)", prev, ok)
		}
		if prev, ok := w.Put(42, 9, winT0.Add(ttl)); ok || prev != 0 {
			t.Errorf("Put at t+ttl = (%d, %v), want (0, false): the entry expired", prev, ok)
		}
		// The renewed entry counts from its own put time.
		if v, ok := w.Lookup(42, winT0.Add(2*ttl-time.Nanosecond)); !ok || v != 9 {
			t.Errorf("renewed entry at its t+ttl-1ns = (%d, %v), want (9, true)", v, ok)
		}
		if _, ok := w.Lookup(42, winT0.Add(2*ttl)); ok {
			t.Errorf("renewed entry visible at its t+ttl")
		}
	}
}

func TestWindowPutOnLiveKeyKeepsFirstValueAndTime(t *testing.T) {
	w := NewWindow(time.Minute, 2)
	w.Put(1, 100, winT0)
	if prev, ok := w.Put(1, 200, winT0.Add(30*time.Second)); !ok || prev != 100 {
		t.Fatalf("Put on live key = (%d, %v), want (100, true) (go test -run=TestWindowPutOnLiveKey ./ref/)", prev, ok)
	}
	// The second Put changed nothing: the first put's time still decides.
	if _, ok := w.Lookup(1, winT0.Add(time.Minute)); ok {
		t.Fatalf("the duplicate Put extended the entry's life (go test -run=TestWindowPutOnLiveKey ./ref/)")
	}
	if prev, ok := w.Put(1, 300, winT0.Add(time.Minute)); ok || prev != 0 {
		t.Fatalf("Put on expired key = (%d, %v), want (0, false)", prev, ok)
	}
	if v, ok := w.Lookup(1, winT0.Add(time.Minute)); !ok || v != 300 {
		t.Fatalf("after re-put Lookup = (%d, %v), want (300, true)", v, ok)
	}
}

func TestWindowKeyZeroIsANormalKey(t *testing.T) {
	w := NewWindow(time.Second, 1)
	if _, ok := w.Lookup(0, winT0); ok {
		t.Fatal("empty window has key 0 (go test -run=TestWindowKeyZero ./ref/)")
	}
	if _, ok := w.Put(0, 0, winT0); ok {
		t.Fatal("first Put(0) reported existed")
	}
	if prev, ok := w.Put(0, 5, winT0.Add(time.Second-1)); !ok || prev != 0 {
		t.Fatalf("Put(0) on live = (%d, %v), want (0, true)", prev, ok)
	}
	if _, ok := w.Lookup(0, winT0.Add(time.Second)); ok {
		t.Fatal("key 0 visible at t+ttl")
	}
	if w.Len() != 1 {
		t.Fatalf("Len = %d, want 1", w.Len())
	}
	// Many other keys do not disturb key 0, and key 0 does not match an empty slot.
	for i := uint64(1); i < 1000; i++ {
		w.Put(winKey(i), i, winT0.Add(2*time.Second))
	}
	if _, ok := w.Lookup(0, winT0.Add(2*time.Second)); ok {
		t.Fatal("key 0 visible after expiry and many inserts")
	}
	w.Put(0, 9, winT0.Add(2*time.Second))
	if v, ok := w.Lookup(0, winT0.Add(2*time.Second)); !ok || v != 9 {
		t.Fatalf("key 0 re-put: Lookup = (%d, %v), want (9, true)", v, ok)
	}
}

// TestWindowMemoryFollowsTheLiveSet streams 10 live sets' worth of distinct
// keys at a constant rate and checks, after warm-up, that the entries held and
// the bytes per live entry stay within the bounds derived in window.go: the
// capacity is at most est/windowTargetLoad with est <= live*(1+1/64 grace)*
// (1+1/31 slice slack), i.e. 1.28*live slots (plus one bucket of rounding per
// shard), so Len <= 1.3*live + 8*shards and the tables take <= 32 B per live
// entry.
func TestWindowMemoryFollowsTheLiveSet(t *testing.T) {
	const (
		live   = 20000
		step   = time.Millisecond
		ttl    = live * step // live distinct keys per ttl at one key per step
		shards = 4
	)
	w := NewWindow(ttl, shards)
	maxLen, maxBytes := 0, 0
	for i := 0; i < 11*live; i++ {
		now := winT0.Add(time.Duration(i) * step)
		if _, ok := w.Put(winKey(uint64(i)), uint64(i), now); ok {
			t.Fatalf("fresh key %d reported existed", i)
		}
		// Every key of the last ttl is still caught.
		if i >= live && i%997 == 0 {
			j := i - live + 1
			if v, ok := w.Lookup(winKey(uint64(j)), now); !ok || v != uint64(j) {
				t.Fatalf("key put %v ago not visible (go test -run=TestWindowMemoryFollowsTheLiveSet ./ref/)", time.Duration(i-j)*step)
			}
			if _, ok := w.Lookup(winKey(uint64(j-1)), now); ok {
				t.Fatalf("key put exactly ttl ago still visible")
			}
		}
		if i >= live {
			maxLen = max(maxLen, w.Len())
			maxBytes = max(maxBytes, w.MemoryBytes())
		}
	}
	headers := w.MemoryBytes() - w.tableBytes()
	lenBound := live*13/10 + windowSlots*shards
	if maxLen > lenBound {
		t.Errorf("Len reached %d, bound %d for %d live entries (go test -run=TestWindowMemoryFollowsTheLiveSet ./ref/)", maxLen, lenBound, live)
	}
	if per := float64(maxBytes-headers) / live; per > 32 {
		t.Errorf("table bytes per live entry reached %.1f, want <= 32 (go test -run=TestWindowMemoryFollowsTheLiveSet ./ref/)", per)
	}
	// When the rate drops to a tenth, memory follows it down.
	base := winT0.Add(11 * live * step)
	for i := 0; i < 10*live/10; i++ {
		w.Put(winKey(uint64(1<<40+i)), 1, base.Add(time.Duration(i)*10*step))
	}
	if got := w.tableBytes(); got > live/10*32*4 {
		t.Errorf("after the rate dropped to a tenth the tables hold %d bytes, want <= %d (4x slack for the shrink hysteresis)", got, live/10*32*4)
	}
}

// tableBytes is MemoryBytes without the fixed headers.
func (w *Window) tableBytes() int {
	n := 0
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		n += cap(s.b) * 192
		s.mu.Unlock()
	}
	return n
}

func TestWindowToleratesTimeGoingSlightlyBackwards(t *testing.T) {
	const ttl = 64 * time.Second // grace = ttl/64 = 1s
	w := NewWindow(ttl, 1)
	w.Put(7, 1, winT0)
	// A caller 500ms behind sees what it should at its own now.
	if _, ok := w.Put(7, 2, winT0.Add(-500*time.Millisecond)); !ok {
		t.Fatal("a slightly earlier now missed the live key (go test -run=TestWindowToleratesTimeGoingSlightlyBackwards ./ref/)")
	}
	// Churn past the expiry of key 7, then ask from 500ms before its expiry.
	for i := uint64(100); i < 5000; i++ {
		w.Put(winKey(i), i, winT0.Add(ttl+100*time.Millisecond))
	}
	if v, ok := w.Lookup(7, winT0.Add(ttl-500*time.Millisecond)); !ok || v != 1 {
		t.Fatalf("within the grace period a late caller lost the entry: (%d, %v)", v, ok)
	}
	// Far in the past and far in the future (saturating arithmetic).
	w.Put(8, 1, time.Unix(0, -1<<62))
	w.Put(9, 1, time.Unix(0, 1<<62))
	if _, ok := w.Lookup(9, time.Unix(0, 1<<62)); !ok {
		t.Fatal("entry at a far-future time not visible")
	}
	w.Put(10, 1, time.Unix(0, 1<<63-10))
	if _, ok := w.Lookup(10, time.Unix(0, 1<<63-2)); !ok {
		t.Fatal("entry at the largest time not visible (expiry must saturate, not wrap)")
	}
}

func TestWindowConcurrentDistinctKeys(t *testing.T) {
	w := NewWindow(time.Hour, 8)
	const workers, per = 8, 2000
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				k := winKey(uint64(g*per + i))
				// Clocks of concurrent callers differ a little.
				now := winT0.Add(time.Duration(i%7) * time.Millisecond)
				if _, ok := w.Put(k, k, now); ok {
					wrong.Add(1)
				}
				if v, ok := w.Lookup(k, now); !ok || v != k {
					wrong.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d wrong answers for distinct keys (go test -race -run=TestWindowConcurrentDistinctKeys ./ref/)", n)
	}
	if w.Len() != workers*per {
		t.Fatalf("Len = %d, want %d", w.Len(), workers*per)
	}
}

func TestWindowConcurrentDuplicateKeysExactlyOneWins(t *testing.T) {
	w := NewWindow(time.Hour, 4)
	const workers, keys = 8, 3000
	var wins [keys]atomic.Int32
	var firstVal [keys]atomic.Uint64
	var wg sync.WaitGroup
	var start sync.WaitGroup
	start.Add(1)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			for i := range keys {
				k := uint64(i) // includes key 0 and weak low bits
				prev, ok := w.Put(k, uint64(g+1), winT0)
				if !ok {
					wins[i].Add(1)
					firstVal[i].Store(uint64(g + 1))
				} else if prev == 0 {
					wins[i].Add(100) // a live key must report its value, never 0
				}
			}
		}()
	}
	start.Done()
	wg.Wait()
	for i := range keys {
		if n := wins[i].Load(); n != 1 {
			t.Fatalf("key %d: %d winners (>=100 means a live hit reported value 0), want exactly 1 (go test -race -run=TestWindowConcurrentDuplicateKeysExactlyOneWins ./ref/)", i, n)
		}
		if v, ok := w.Lookup(uint64(i), winT0); !ok || v != firstVal[i].Load() {
			t.Fatalf("key %d: Lookup = (%d, %v), want the winner's value %d", i, v, ok, firstVal[i].Load())
		}
	}
}

func TestNewWindowPanicsNamingTheBadValue(t *testing.T) {
	for _, c := range []struct {
		ttl    time.Duration
		shards int
		want   string
	}{{0, 1, "got 0s"}, {-time.Second, 1, "got -1s"}, {time.Second, 0, "got 0"}, {time.Second, -3, "got -3"}} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Errorf("NewWindow(%v, %d) panicked with %v, want a message containing %q", c.ttl, c.shards, r, c.want)
				}
			}()
			NewWindow(c.ttl, c.shards)
		}()
	}
	if n := len(NewWindow(time.Second, 5).shards); n != 8 {
		t.Errorf("shards=5 gave %d shards, want 8 (next power of two)", n)
	}
}

func TestWindowSteadyStateDoesNotAllocate(t *testing.T) {
	const live = 4096
	w := NewWindow(live*time.Microsecond, 4)
	i := 0
	put := func() {
		w.Put(winKey(uint64(i)), 1, winT0.Add(time.Duration(i)*time.Microsecond))
		i++
	}
	for range 3 * live { // warm up: the tables reach their steady size
		put()
	}
	if a := testing.AllocsPerRun(5*live, put); a != 0 {
		t.Errorf("Put allocates %v per call in steady state (go test -run=TestWindowSteadyStateDoesNotAllocate ./ref/)", a)
	}
	look := func() { w.Lookup(winKey(uint64(i-100)), winT0.Add(time.Duration(i)*time.Microsecond)) }
	if a := testing.AllocsPerRun(1000, look); a != 0 {
		t.Errorf("Lookup allocates %v per call", a)
	}
}

// winModel is the trivially correct window: a map of key to (value, put time).
type winModel struct {
	ttl time.Duration
	m   map[uint64]struct {
		val uint64
		at  time.Time
	}
}

func (m *winModel) put(k, v uint64, now time.Time) (uint64, bool) {
	if e, ok := m.m[k]; ok && now.Before(e.at.Add(m.ttl)) {
		return e.val, true
	}
	m.m[k] = struct {
		val uint64
		at  time.Time
	}{v, now}
	return 0, false
}

func (m *winModel) live(now time.Time) int {
	n := 0
	for _, e := range m.m {
		if now.Before(e.at.Add(m.ttl)) {
			n++
		}
	}
	return n
}

func (m *winModel) lookup(k uint64, now time.Time) (uint64, bool) {
	if e, ok := m.m[k]; ok && now.Before(e.at.Add(m.ttl)) {
		return e.val, true
	}
	return 0, false
}

// TestWindowAgreesWithAMapModel runs random puts and lookups at forward-moving
// random times against both the window and winModel. Keys come from a small
// set (so duplicates, expiries and renewals are common) and include 0.
func TestWindowAgreesWithAMapModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ttl := time.Duration(rapid.Int64Range(1, 200).Draw(rt, "ttl"))
		shards := rapid.IntRange(1, 4).Draw(rt, "shards")
		nkeys := rapid.IntRange(1, 300).Draw(rt, "nkeys")
		w := NewWindow(ttl, shards)
		m := &winModel{ttl: ttl, m: map[uint64]struct {
			val uint64
			at  time.Time
		}{}}
		now := winT0
		ops := rapid.IntRange(1, 2000).Draw(rt, "ops")
		for op := range ops {
			now = now.Add(time.Duration(rapid.Int64Range(0, int64(ttl)/4+1).Draw(rt, "dt")))
			ki := rapid.IntRange(0, nkeys-1).Draw(rt, "k")
			k := uint64(0)
			if ki > 0 {
				k = winKey(uint64(ki))
			}
			if rapid.IntRange(0, 3).Draw(rt, "isLookup") == 0 {
				gv, gok := w.Lookup(k, now)
				mv, mok := m.lookup(k, now)
				if gv != mv || gok != mok {
					rt.Fatalf("op %d Lookup(%#x, +%v) = (%d, %v), model (%d, %v)", op, k, now.Sub(winT0), gv, gok, mv, mok)
				}
				continue
			}
			v := uint64(op + 1)
			gp, gok := w.Put(k, v, now)
			mp, mok := m.put(k, v, now)
			if gp != mp || gok != mok {
				rt.Fatalf("op %d Put(%#x, %d, +%v) = (%d, %v), model (%d, %v)", op, k, v, now.Sub(winT0), gp, gok, mp, mok)
			}
			if op%16 == 0 {
				if got, want := w.Live(now), m.live(now); got != want {
					rt.Fatalf("op %d Live(+%v) = %d, model %d", op, now.Sub(winT0), got, want)
				}
			}
		}
	})
}

// TestWindowCuckooStressAgreesWithModel forces many resizes and kick walks
// (tiny tables, bursts of distinct keys, then silence, then bursts) and checks
// every live key after each burst.
func TestWindowCuckooStressAgreesWithModel(t *testing.T) {
	const ttl = time.Second
	w := NewWindow(ttl, 1)
	now := winT0
	for round := range 20 {
		n := 1 + (round*7919)%5000
		for i := range n {
			k := winKey(uint64(round<<20 | i))
			if _, ok := w.Put(k, uint64(i), now); ok {
				t.Fatalf("round %d key %d: fresh key reported existed (go test -run=TestWindowCuckooStressAgreesWithModel ./ref/)", round, i)
			}
		}
		for i := range n {
			k := winKey(uint64(round<<20 | i))
			if v, ok := w.Lookup(k, now); !ok || v != uint64(i) {
				t.Fatalf("round %d key %d lost after a burst of %d: (%d, %v) (go test -run=TestWindowCuckooStressAgreesWithModel ./ref/)", round, i, n, v, ok)
			}
		}
		now = now.Add(ttl + ttl/32) // everything expires, beyond the grace period
	}
	if got := w.Len(); got > 5000+50 {
		t.Errorf("Len = %d after bursts of at most 5000", got)
	}
}

func ExampleWindow() {
	w := NewWindow(time.Minute, 4)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println(w.Put(0xfeed, 1, t0))
	fmt.Println(w.Put(0xfeed, 2, t0.Add(59*time.Second)))
	fmt.Println(w.Put(0xfeed, 3, t0.Add(time.Minute)))
	// Output:
	// 0 false
	// 1 true
	// 0 false
}

// TestWindowLiveCountsEntriesLiveAtNowToTheNanosecond checks Live at the
// boundaries of the contract: an entry put at t counts while now < t+ttl.
func TestWindowLiveCountsEntriesLiveAtNowToTheNanosecond(t *testing.T) {
	const ttl = time.Minute
	w := NewWindow(ttl, 2)
	for i := range 3 {
		w.Put(winKey(uint64(i)), 1, winT0.Add(time.Duration(i)))
	}
	w.Put(0, 1, winT0)                // key 0 counts like any other
	w.Put(winKey(0), 2, winT0.Add(2)) // a duplicate adds nothing
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{0, 4}, {ttl - 1, 4}, {ttl, 2}, {ttl + 1, 1}, {ttl + 2, 0}} {
		if got := w.Live(winT0.Add(c.at)); got != c.want {
			t.Errorf("Live at t0+%v = %d, want %d (go test -run=TestWindowLiveCountsEntriesLiveAtNowToTheNanosecond ./ref/)", c.at, got, c.want)
		}
	}
	// An expired key put again is one live entry, not two (its old entry
	// may still occupy a slot).
	w.Put(winKey(1), 3, winT0.Add(ttl+2))
	if got := w.Live(winT0.Add(ttl + 2)); got != 1 {
		t.Errorf("Live after re-putting an expired key = %d, want 1 (go test -run=TestWindowLiveCountsEntriesLiveAtNowToTheNanosecond ./ref/)", got)
	}
}
