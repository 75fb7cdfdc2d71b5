package ref

// The three tests of the source document 000_3fc5d928301791d1.txt, unchanged
// but for the definition of base (the seed's excerpt leaves it out).

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// base is a fixed instant: nothing under test reads the wall clock.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestSettleCatchesRetryAfterWindowExpiry(t *testing.T) {
	win := NewWindow(100*time.Millisecond, 4)
	s := NewSettler(win, NewMemStore())
	fp := FingerprintOf(0x0103, 42, 7, 9001)

	if _, fresh := s.Settle(fp, base); !fresh {
		t.Fatal("first settle was not fresh")
	}
	// The window has slid past the request...
	if _, ok := win.Lookup(uint64(fp), base.Add(500*time.Millisecond)); ok {
		t.Fatal("fingerprint still in window after ttl")
	}
	// ...but the durable constraint still rejects the late retry.
	st, fresh := s.Settle(fp, base.Add(500*time.Millisecond))
	if fresh || st != StateDelivered {
		t.Fatalf("late retry = (%v, %v), want (Delivered, false)", st, fresh)
	}
	if got := s.Stats(); got.StoreDup != 1 || got.Granted != 1 {
		t.Fatalf("stats = %+v, want StoreDup=1 Granted=1", got)
	}
}

func TestSettleExactlyOnceUnderReplay(t *testing.T) {
	s := NewSettler(NewWindow(time.Millisecond, 4), NewMemStore())
	fp := FingerprintOf(0x0201, 42, 7, 100, 200)

	granted := 0
	for i := 0; i < 200; i++ {
		// Deliver the same request once per millisecond; the 1ms window
		// expires almost immediately, so most of these reach the store.
		if _, fresh := s.Settle(fp, base.Add(time.Duration(i)*time.Millisecond)); fresh {
			granted++
		}
	}
	if granted != 1 {
		t.Fatalf("granted %d times, want exactly 1", granted)
	}
}

func TestSettleConcurrentReplay(t *testing.T) {
	s := NewSettler(NewWindow(time.Minute, 8), NewMemStore())
	fp := FingerprintOf(0x0301, 42, 7, 77)

	var grants int64
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, fresh := s.Settle(fp, base); fresh {
				atomic.AddInt64(&grants, 1)
			}
		}()
	}
	wg.Wait()
	if grants != 1 {
		t.Fatalf("granted %d times under concurrency, want exactly 1", grants)
	}
}
