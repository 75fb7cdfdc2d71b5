package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onceproof/onceproof/ref/loot"
)

// switchLock is a lock service that works (Lock) until hung is set, and
// then accepts every call and never answers (a SIGSTOPped Redis): each
// call blocks until its ctx is done. It records how many calls waited at
// once.
type switchLock struct {
	loot.Lock
	hung      atomic.Bool
	mu        sync.Mutex
	in, maxIn int
}

func (l *switchLock) hang(ctx context.Context) error {
	l.mu.Lock()
	l.in++
	l.maxIn = max(l.maxIn, l.in)
	l.mu.Unlock()
	<-ctx.Done()
	l.mu.Lock()
	l.in--
	l.mu.Unlock()
	return ctx.Err()
}

func (l *switchLock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	if l.hung.Load() {
		return false, l.hang(ctx)
	}
	return l.Lock.Acquire(ctx, key, token, ttl)
}

func (l *switchLock) Release(ctx context.Context, key, token string) (bool, error) {
	if l.hung.Load() {
		return false, l.hang(ctx)
	}
	return l.Lock.Release(ctx, key, token)
}

// countLog counts the JSON lines of l whose fields match.
func countLog(l *logLines, match map[string]string) int {
	n := 0
	for from := 0; ; n++ {
		rec, i, _ := l.find(from, match)
		if rec == nil {
			return n
		}
		from = i + 1
	}
}

// withLog rebuilds h's server on its backend with lease, logging JSON
// lines into the returned logLines (newHarness discards its log).
func withLog(t *testing.T, h *harness, lease time.Duration) *logLines {
	t.Helper()
	logs := newLogLines()
	srv, err := newServer(h.be, h.srv.auth, lease, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	h.player, h.internal = httptest.NewServer(srv.playerHandler()), httptest.NewServer(srv.internalHandler())
	t.Cleanup(h.player.Close)
	t.Cleanup(h.internal.Close)
	return logs
}

// runSettleDue runs one settle loop pass with workers and fails t if it
// has not ended within limit.
func runSettleDue(t *testing.T, h *harness, workers int, limit time.Duration) time.Duration {
	t.Helper()
	done := make(chan struct{})
	begin := time.Now()
	go func() {
		h.srv.settleDue(context.Background(), context.Background(), workers)
		close(done)
	}()
	select {
	case <-done:
		return time.Since(begin)
	case <-time.After(limit):
		t.Fatalf("the settle loop's pass over due sessions with a hung lock did not end within %v", limit)
		return 0
	}
}

// TestHungLockNeitherStallsNorSerialisesTheSettleLoop: with the lock
// service hung, the settle loop settles every due session through the
// CAS, several at once (never more than its workers), each bounded by the
// lock timeout; the outage is one WARN, lootd_lock_degraded 1 and /readyz
// "degraded" (200: the instance still settles correctly); the first lock
// call that works after it is one INFO and clears both.
func TestHungLockNeitherStallsNorSerialisesTheSettleLoop(t *testing.T) {
	const (
		lease    = 10 * time.Second // lock timeout: loot.DefaultLockTimeout's 100ms floor
		sessions = 6
		workers  = 3
	)
	lock := &switchLock{}
	h := newHarness(t, func(be *backend) { lock.Lock, be.lock = be.lock, lock })
	logs := withLog(t, h, lease)
	for i := range sessions {
		no := fmt.Sprintf("H%d", i)
		h.claiming(spec(no, 1, 1001, 1002))
		if st, out := h.claim("1001", `{"sessionNo":"`+no+`","intentType":"NEED"}`); st != 200 {
			t.Fatalf("claim %s: %d %v", no, st, out)
		}
	}
	h.clock.Advance(61 * time.Second) // past spec's 60s window
	lock.hung.Store(true)

	// 10s: 6 settles of 2 x 100ms lock timeouts, 3 at a time, are 400ms;
	// the margin is for two loaded cores under -race. Without the bound a
	// pass never ends.
	took := runSettleDue(t, h, workers, 10*time.Second)
	t.Logf("%d due sessions settled in %v with the lock hung (%d workers, lock timeout %v)", sessions, took, workers, h.srv.svc.LockTimeout())
	for i := range sessions {
		if s, err := h.be.store.Session(t.Context(), fmt.Sprintf("H%d", i)); err != nil || s.Status != loot.StatusClosed {
			t.Errorf("session H%d after the pass: %v, %v; want CLOSED through the CAS", i, s.Status, err)
		}
	}
	lock.mu.Lock()
	maxIn := lock.maxIn
	lock.mu.Unlock()
	if maxIn < 2 || maxIn > workers {
		t.Errorf("at most %d lock calls waited at once, want 2..%d: settles of independent sessions run side by side, bounded by the workers", maxIn, workers)
	}
	m := h.srv.m
	if n := testutil.ToFloat64(m.locks.WithLabelValues("error")); n != sessions {
		t.Errorf("lootd_lock_acquires_total{result=error} = %v, want %d (one per settle)", n, sessions)
	}
	if n := testutil.ToFloat64(m.releases.WithLabelValues("error")); n != sessions {
		t.Errorf("lootd_lock_releases_total{result=error} = %v, want %d (an unknown Acquire is released)", n, sessions)
	}
	if n := countLog(logs, map[string]string{"msg": "lock degraded: settles go on through the store's CAS alone, each slowed by at most two lock timeouts", "level": "WARN"}); n != 1 {
		t.Errorf("%d \"lock degraded\" WARN lines for one outage of %d failed calls, want 1:\n%s", n, 2*sessions, logs)
	}
	checkLockReported(t, h, "degraded", 1)

	lock.hung.Store(false)
	h.claiming(spec("H-after", 1, 1001))
	h.clock.Advance(61 * time.Second)
	runSettleDue(t, h, workers, 10*time.Second)
	if s, _ := h.be.store.Session(t.Context(), "H-after"); s.Status != loot.StatusClosed {
		t.Errorf("session H-after with the lock back: %s, want CLOSED", s.Status)
	}
	if n := testutil.ToFloat64(m.locks.WithLabelValues("acquired")); n != 1 {
		t.Errorf("lootd_lock_acquires_total{result=acquired} = %v after the lock came back, want 1", n)
	}
	if n := countLog(logs, map[string]string{"msg": "lock recovered", "level": "INFO"}); n != 1 {
		t.Errorf("%d \"lock recovered\" INFO lines, want 1:\n%s", n, logs)
	}
	checkLockReported(t, h, "ok", 0)
}

// checkLockReported checks /readyz's lock field (the status 200: see
// readyz) and lootd_lock_degraded.
func checkLockReported(t *testing.T, h *harness, want string, gauge float64) {
	t.Helper()
	st, out := h.do("GET", h.internal.URL+"/readyz", nil)
	if st != 200 || out["status"] != "ok" || out["lock"] != want || out["store"] != "memory" {
		t.Errorf("/readyz = %d %v, want 200 with status ok, store memory, lock %q", st, out, want)
	}
	if g := testutil.ToFloat64(h.srv.m.lock.gauge); g != gauge {
		t.Errorf("lootd_lock_degraded = %v, want %v", g, gauge)
	}
}

// TestReadyzSaysNoneWithoutALock: without -redis (a SQL store alone) the
// CAS decides alone and /readyz says so; /healthz is unchanged.
func TestReadyzSaysNoneWithoutALock(t *testing.T) {
	h := newHarness(t, func(be *backend) { be.lock = nil })
	if st, out := h.do("GET", h.internal.URL+"/readyz", nil); st != 200 || out["lock"] != "none" {
		t.Errorf("/readyz without a lock = %d %v, want 200 lock none", st, out)
	}
	if st, out := h.do("GET", h.internal.URL+"/healthz", nil); st != 200 || out["status"] != "ok" || out["lock"] != nil {
		t.Errorf("/healthz = %d %v, want 200 status ok and nothing of the lock", st, out)
	}
}

// TestSettleLoopStopsStartingSettlesOnceStopIsDone: stop done before a
// pass (the drain) starts none.
func TestSettleLoopStopsStartingSettlesOnceStopIsDone(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("D1", 1, 1001))
	h.clock.Advance(61 * time.Second)
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	h.srv.settleDue(stop, context.Background(), 4)
	if s, _ := h.be.store.Session(t.Context(), "D1"); s.Status != loot.StatusClaiming {
		t.Errorf("session D1 after a pass with stop done: %s, want CLAIMING (no settle started)", s.Status)
	}
}
