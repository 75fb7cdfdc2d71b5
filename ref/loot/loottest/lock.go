package loottest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// LockHarness gives RunLock one lock service and its clock.
type LockHarness struct {
	// Open returns a new handle on the harness's lock service (another
	// node's client). Required.
	Open func(t *testing.T) loot.Lock
	// Advance moves the lock service's clock forward by at least d. A
	// harness on a real server (Redis judges ttls by its own clock) sleeps;
	// the checks' durations are small (lockTTL) for that reason. Required.
	Advance func(t *testing.T, d time.Duration)
	_       struct{}
}

// lockTTL is the ttl the lock checks use; they probe it at half and at
// ttl + lockTTL/10, never at the exact boundary, so a real server's
// millisecond ttls and a harness that sleeps both pass.
const lockTTL = 100 * time.Millisecond

// RunLock runs every Lock check as a subtest of t. newHarness is called
// once per subtest and must return a harness on a lock service with no
// keys held. The checks: one holder, ttl by the lock's clock, atomic
// compare-and-delete.
func RunLock(t *testing.T, newHarness func(t *testing.T) LockHarness) {
	t.Helper()
	if newHarness == nil {
		t.Fatal("loottest.RunLock: newHarness is nil")
	}
	runChecks(t, lockChecks, newHarness, func(t *testing.T, h LockHarness) LockHarness {
		if h.Open == nil || h.Advance == nil {
			t.Fatal("loottest: LockHarness.Open and Advance are required")
		}
		return h
	})
}

var lockChecks = []named[LockHarness]{
	{"acquire/one-holder-under-20-concurrent", checkLockExclusive},
	{"acquire/live-key-not-taken-nor-extended", checkLockNotExtended},
	{"acquire/ttl-by-lock-clock", checkLockTTL},
	{"release/compare-and-delete", checkLockRelease},
	{"release/after-expiry-spares-new-holder", checkLockReleaseExpired},
	{"release/atomic-under-race", checkLockReleaseRace},
	{"context/canceled", checkLockCanceled},
}

func acquire(t *testing.T, l loot.Lock, key, token string, ttl time.Duration) bool {
	t.Helper()
	got, err := l.Acquire(ctx(t), key, token, ttl)
	ok(t, fmt.Sprintf("Acquire(%s, %s)", key, token), err)
	return got
}

func release(t *testing.T, l loot.Lock, key, token string) bool {
	t.Helper()
	got, err := l.Release(ctx(t), key, token)
	ok(t, fmt.Sprintf("Release(%s, %s)", key, token), err)
	return got
}

// checkLockExclusive: 20 settlers with distinct tokens on two handles try
// at once; exactly one gets the key.
func checkLockExclusive(t *testing.T, h LockHarness) {
	const settlers = 20
	ls := []loot.Lock{h.Open(t), h.Open(t)}
	type answer struct {
		got bool
		err error
	}
	as := Together(settlers, func(g int) answer {
		got, err := ls[g%2].Acquire(ctx(t), "k", fmt.Sprintf("token-%d", g), 10*lockTTL)
		return answer{got, err}
	})
	var won []int
	for g, a := range as {
		ok(t, "concurrent Acquire", a.err)
		if a.got {
			won = append(won, g)
		}
	}
	if len(won) != 1 {
		t.Errorf("%d of %d concurrent Acquires got the key (settlers %v), want exactly 1", len(won), settlers, won)
	}
}

// checkLockNotExtended: a live key is neither taken by another token nor
// extended by its own holder asking again.
func checkLockNotExtended(t *testing.T, h LockHarness) {
	a, b := h.Open(t), h.Open(t)
	if !acquire(t, a, "k", "A", lockTTL) {
		t.Fatal("Acquire of a free key = false")
	}
	h.Advance(t, lockTTL/2)
	if acquire(t, b, "k", "B", lockTTL) {
		t.Error("Acquire of a live key by another token = true")
	}
	if acquire(t, a, "k", "A", lockTTL) {
		t.Error("Acquire of a live key by its own token = true: it must not extend or renew")
	}
	h.Advance(t, lockTTL/2+lockTTL/10)
	if !acquire(t, b, "k", "B", lockTTL) {
		t.Error("Acquire after the first ttl ended = false: the holder's second Acquire extended the key")
	}
}

// checkLockTTL: the key is held for its ttl by the lock's clock, then free.
func checkLockTTL(t *testing.T, h LockHarness) {
	a, b := h.Open(t), h.Open(t)
	acquire(t, a, "k", "A", lockTTL)
	acquire(t, a, "other", "A", 100*lockTTL) // keys are independent
	h.Advance(t, lockTTL/2)
	if acquire(t, b, "k", "B", lockTTL) {
		t.Error("Acquire at half the ttl = true")
	}
	h.Advance(t, lockTTL/2+lockTTL/10)
	if !acquire(t, b, "k", "B", lockTTL) {
		t.Error("Acquire after the ttl ended = false: the key never expires")
	}
	if acquire(t, b, "other", "B", lockTTL) {
		t.Error("Acquire of another key, still live = true")
	}
}

// checkLockRelease: Release deletes only with the holder's token.
func checkLockRelease(t *testing.T, h LockHarness) {
	a, b := h.Open(t), h.Open(t)
	acquire(t, a, "k", "A", 10*lockTTL)
	if release(t, b, "k", "B") {
		t.Error("Release with another token = true")
	}
	if acquire(t, b, "k", "B", lockTTL) {
		t.Error("Release with another token deleted the holder's key")
	}
	if !release(t, a, "k", "A") {
		t.Error("Release with the holder's token = false")
	}
	if release(t, a, "k", "A") {
		t.Error("second Release = true")
	}
	if !acquire(t, b, "k", "B", lockTTL) {
		t.Error("Acquire after the holder's Release = false")
	}
}

// checkLockReleaseExpired: a settler that paused past its ttl releases
// after another took the key: the new holder's lock must survive.
func checkLockReleaseExpired(t *testing.T, h LockHarness) {
	a, b, c := h.Open(t), h.Open(t), h.Open(t)
	acquire(t, a, "k", "A", lockTTL)
	h.Advance(t, lockTTL+lockTTL/10)
	if !acquire(t, b, "k", "B", 10*lockTTL) {
		t.Fatal("Acquire after the ttl ended = false")
	}
	if release(t, a, "k", "A") {
		t.Error("a late Release by the expired holder = true")
	}
	if acquire(t, c, "k", "C", lockTTL) {
		t.Error("a late Release by the expired holder deleted the new holder's key")
	}
}

// checkLockReleaseRace: the holder's Release races its own expiry and a
// new Acquire. A GET then a DEL from the client loses this race: the key
// expires and is taken between them, and the DEL removes the new holder's
// lock. The compare-and-delete must be one atomic step.
func checkLockReleaseRace(t *testing.T, h LockHarness) {
	const rounds = 20
	a, b, c := h.Open(t), h.Open(t), h.Open(t)
	for r := range rounds {
		key := fmt.Sprintf("race-%d", r)
		acquire(t, a, key, "A", lockTTL)
		var (
			wg        sync.WaitGroup
			start     = make(chan struct{})
			releasing = make(chan struct{})
			errA      error
			gotB      bool
		)
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			close(releasing)
			_, errA = a.Release(ctx(t), key, "A")
		}()
		go func() {
			defer wg.Done()
			<-releasing // A's Release is on its way: expire and take the key under it
			h.Advance(t, lockTTL+lockTTL/10)
			gotB, _ = b.Acquire(ctx(t), key, "B", 100*lockTTL)
		}()
		close(start)
		wg.Wait()
		ok(t, "Release", errA)
		if !gotB {
			t.Fatalf("round %d: Acquire after A's ttl ended and its Release = false", r)
		}
		if acquire(t, c, key, "C", lockTTL) {
			t.Fatalf("round %d: A's Release removed B's lock (taken after A's expired): release is not one compare-and-delete", r)
		}
	}
}

// checkLockCanceled: both calls honour a cancelled context and change
// nothing.
func checkLockCanceled(t *testing.T, h LockHarness) {
	a, b := h.Open(t), h.Open(t)
	acquire(t, a, "held", "A", 10*lockTTL)
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	if _, err := b.Acquire(cctx, "free", "B", lockTTL); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if _, err := a.Release(cctx, "held", "A"); !errors.Is(err, context.Canceled) {
		t.Errorf("Release with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if !acquire(t, a, "free", "A", lockTTL) {
		t.Error("a cancelled Acquire took the key")
	}
	if acquire(t, b, "held", "B", lockTTL) {
		t.Error("a cancelled Release deleted the key")
	}
}
