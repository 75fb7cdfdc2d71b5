package loot_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// hungLock is a lock service that accepted the connection and never
// answers (a SIGSTOPped Redis): every call blocks until its ctx is done
// and records how long it was given.
type hungLock struct {
	mu    sync.Mutex
	calls []string        // "acquire", "release", in order
	given []time.Duration // each call's ctx deadline from its start (0: none)
}

func (l *hungLock) wait(ctx context.Context, call string) error {
	var given time.Duration
	if d, ok := ctx.Deadline(); ok {
		given = time.Until(d)
	}
	l.mu.Lock()
	l.calls, l.given = append(l.calls, call), append(l.given, given)
	l.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (l *hungLock) Acquire(ctx context.Context, _, _ string, _ time.Duration) (bool, error) {
	return false, l.wait(ctx, "acquire")
}

func (l *hungLock) Release(ctx context.Context, _, _ string) (bool, error) {
	return false, l.wait(ctx, "release")
}

// settleWithin runs svc.Settle(ctx, no) and fails t if it has not
// returned within limit (it is then left running: t ends).
func settleWithin(t *testing.T, ctx context.Context, svc *loot.Service, no string, limit time.Duration) (loot.Settlement, error, time.Duration) {
	t.Helper()
	type result struct {
		st  loot.Settlement
		err error
	}
	done := make(chan result, 1)
	begin := time.Now()
	go func() {
		st, err := svc.Settle(ctx, no)
		done <- result{st, err}
	}()
	select {
	case r := <-done:
		return r.st, r.err, time.Since(begin)
	case <-time.After(limit):
		t.Fatalf("Settle(%s) with a lock service that never answers did not return within %v: the lock calls are not bounded", no, limit)
		return loot.Settlement{}, nil, 0
	}
}

// TestSettleBoundsAHungLockAndGoesOnToTheCAS: a lock service that never
// answers costs a settle its lock timeout per call (the default, from the
// lease), not the client's socket timeout or forever, and the settle goes
// on through the CAS and delivers. The Release is bounded too, even when
// the caller's ctx has no deadline.
func TestSettleBoundsAHungLockAndGoesOnToTheCAS(t *testing.T) {
	const lease = 10 * time.Second
	timeout := loot.DefaultLockTimeout(lease) // 100ms: the floor
	w := newWorld(t)
	lock := &hungLock{}
	svc := w.node(loot.Config{Lock: lock, SettleLease: lease})
	w.claiming(svc, "S", 1, loot.RuleCount, 1, 2)
	w.claim(svc, "S", 1, loot.Need)
	w.advance(claimWindow)

	// 2s: Acquire and Release at 100ms each, and a loaded machine's
	// scheduling; the old behaviour never returned.
	st, err, took := settleWithin(t, context.Background(), svc, "S", 2*time.Second)
	if err != nil || st.Session.Status != loot.StatusClosed || st.Delivered != 1 {
		t.Fatalf("Settle with a hung lock = %+v, %v; want CLOSED with its one grant delivered through the CAS", st, err)
	}
	if got := w.holders(1, 2); got[1] != 1 || got[2] != 0 {
		t.Errorf("rings held %v, want player 1's alone", got)
	}
	if took < 2*timeout {
		t.Errorf("Settle took %v, under the two bounded lock calls' %v: did it wait for them at all?", took, 2*timeout)
	}
	lock.mu.Lock()
	defer lock.mu.Unlock()
	if len(lock.calls) != 2 || lock.calls[0] != "acquire" || lock.calls[1] != "release" {
		t.Fatalf("lock calls %v, want [acquire release]: an unknown Acquire is released", lock.calls)
	}
	for i, g := range lock.given {
		if g <= 0 || g > timeout {
			t.Errorf("%s was given %v, want a deadline within the lock timeout %v", lock.calls[i], g, timeout)
		}
	}
}

// TestSettleReleasesUnderItsOwnBoundWhenTheCallerGaveUp: the caller's ctx
// is cancelled mid-settle (a settle loop cut short at the drain); the
// Release still runs, with its own deadline, so the key is freed now
// rather than left to its ttl.
func TestSettleReleasesUnderItsOwnBoundWhenTheCallerGaveUp(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(t.Context())
	lock := &cancelingLock{Lock: w.lock, cancel: cancel}
	svc := w.node(loot.Config{Lock: lock, LockTimeout: time.Second})
	w.claiming(svc, "S", 1, loot.RuleCount, 1)
	w.claim(svc, "S", 1, loot.Need)
	w.advance(claimWindow)
	_, _ = svc.Settle(ctx, "S") // its outcome under a cancelled ctx is the store's; the release is checked
	if !lock.released || lock.releaseErr != nil {
		t.Fatalf("Release after the caller's cancel: called %v, err %v; want it run under its own bound", lock.released, lock.releaseErr)
	}
	if ok, err := w.lock.Acquire(t.Context(), loot.LockKey("S"), "next", time.Minute); err != nil || !ok {
		t.Errorf("the next settler's Acquire = %v, %v; want the key freed by the release", ok, err)
	}
}

// cancelingLock cancels the settle's ctx once the lock is taken.
type cancelingLock struct {
	loot.Lock
	cancel     context.CancelFunc
	released   bool
	releaseErr error
}

func (l *cancelingLock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	ok, err := l.Lock.Acquire(ctx, key, token, ttl)
	l.cancel()
	return ok, err
}

func (l *cancelingLock) Release(ctx context.Context, key, token string) (bool, error) {
	l.released = true
	if err := ctx.Err(); err != nil {
		l.releaseErr = err
		return false, err
	}
	if _, ok := ctx.Deadline(); !ok {
		l.releaseErr = errors.New("no deadline")
		return false, l.releaseErr
	}
	return l.Lock.Release(ctx, key, token)
}

func TestDefaultLockTimeoutIsAFractionOfTheLease(t *testing.T) {
	for _, c := range []struct{ lease, want time.Duration }{
		{loot.DefaultSettleLease, 300 * time.Millisecond}, // lease/100
		{time.Minute, 600 * time.Millisecond},             // lease/100
		{3 * time.Second, 100 * time.Millisecond},         // the floor
		{300 * time.Millisecond, 75 * time.Millisecond},   // lease/4 under the floor
	} {
		if got := loot.DefaultLockTimeout(c.lease); got != c.want {
			t.Errorf("DefaultLockTimeout(%v) = %v, want %v", c.lease, got, c.want)
		}
	}
}

func TestNewRefusesANegativeLockTimeout(t *testing.T) {
	w := newWorld(t)
	cfg := loot.Config{Store: w.store, Inventory: w.store.Inventory(), Fairness: w.history, LockTimeout: -time.Millisecond}
	if _, err := loot.New(cfg); !errors.Is(err, loot.ErrBadArgument) {
		t.Errorf("New with LockTimeout -1ms = %v, want ErrBadArgument", err)
	}
}
