package sharded

import (
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/ref"
)

var t0 = faults.Epoch

// seen and mark use the window as the Settler does: the fingerprint is the
// key, the key's other 64 bits the value.
func seen(w *MapWindow, k ref.Key, now time.Time) bool {
	v, ok := w.Lookup(k.Hi, now)
	return ok && v == k.Lo
}

func mark(w *MapWindow, k ref.Key, now time.Time) { w.Put(k.Hi, k.Lo, now) }

func TestMapWindowBoundaryIsExact(t *testing.T) {
	w := NewMapWindow(time.Second)
	k := ref.Key{Hi: 42, Lo: 7}
	mark(w, k, t0)
	if !seen(w, k, t0.Add(time.Second-time.Nanosecond)) {
		t.Fatal("entry not seen 1ns before its ttl ends")
	}
	if seen(w, k, t0.Add(time.Second)) {
		t.Fatal("entry still seen at t+ttl")
	}
	if n := w.Live(t0.Add(time.Second)); n != 0 {
		t.Fatalf("Len at t+ttl = %d, want 0 (expired entries are swept)", n)
	}
}

func TestMapWindowMissesAKeyWhoseLowBitsDiffer(t *testing.T) {
	w := NewMapWindow(time.Second)
	mark(w, ref.Key{Hi: 42, Lo: 7}, t0)
	if seen(w, ref.Key{Hi: 42, Lo: 8}, t0) {
		t.Fatal("a 64-bit collision was taken for a hit: the store must decide it")
	}
}

func TestMapWindowMarkOnALiveKeyKeepsTheFirstTime(t *testing.T) {
	w := NewMapWindow(time.Second)
	k := ref.Key{Hi: 1, Lo: 1}
	mark(w, k, t0)
	mark(w, k, t0.Add(900*time.Millisecond))
	if seen(w, k, t0.Add(time.Second)) {
		t.Fatal("a second mark of a live key extended its life")
	}
	// After expiry a mark starts a new life.
	mark(w, k, t0.Add(2*time.Second))
	if !seen(w, k, t0.Add(2*time.Second+500*time.Millisecond)) {
		t.Fatal("a mark after expiry was not taken")
	}
}

// TestMapWindowMemoryFollowsTheLiveSet: 10,000 marks, 100 per ttl; the
// window and its queues never hold more than the last ttl's marks.
func TestMapWindowMemoryFollowsTheLiveSet(t *testing.T) {
	const ttl = time.Second
	w := NewMapWindow(ttl)
	step := ttl / 100
	for i := range 10000 {
		now := t0.Add(time.Duration(i) * step)
		mark(w, ref.Key{Hi: uint64(i) * 0x9E3779B97F4A7C15, Lo: uint64(i)}, now)
		if n := w.Live(now); n > 100 {
			t.Fatalf("after %d marks: Len = %d, want <= 100 (marks within the ttl)", i+1, n)
		}
	}
	q := 0
	for i := range w.shards {
		q += cap(w.shards[i].fifo)
	}
	if q > 4*100+shardCount*8 {
		t.Fatalf("expiry queues hold %d slots for 100 live entries: they follow history, not the live set", q)
	}
}

func TestMapWindowConcurrentMarksAndLookups(t *testing.T) {
	w := NewMapWindow(time.Minute)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				k := ref.Key{Hi: uint64(g*1000+i) << 40, Lo: uint64(i)}
				mark(w, k, t0)
				if !seen(w, k, t0) {
					t.Errorf("goroutine %d: key %d not seen after its mark", g, i)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := w.Live(t0); n != 4000 {
		t.Fatalf("Len = %d, want 4000", n)
	}
}
