package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onceproof/onceproof/ref/loot"
)

// flakyInventory fails its first fails deliveries (a timeout: outcome
// unknown, nothing applied).
type flakyInventory struct {
	loot.Inventory
	fails atomic.Int32
}

func (f *flakyInventory) Deliver(ctx context.Context, g loot.Grant) error {
	if f.fails.Add(-1) >= 0 {
		return errors.New("inventory: timeout")
	}
	return f.Inventory.Deliver(ctx, g)
}

// eventually polls cond every few milliseconds for up to 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within 10s: %s", what)
		}
	}
}

// The loops in process, under the race detector (the e2e build of lootd
// is not a race build): the settle loop settles at the deadline by the
// store's clock, the compensation loop delivers what the settler's own
// delivery failed, only once the grants' lease ends, and both stop.
func TestLoopsSettleAtTheDeadlineAndCompensateFailedDeliveries(t *testing.T) {
	inv := &flakyInventory{}
	inv.fails.Store(2)
	h := newHarness(t, func(be *backend) { inv.Inventory, be.inventory = be.inventory, inv })
	h.claiming(spec("S1", 2, 1001, 1002, 1003))
	h.claim("1001", `{"sessionNo":"S1","intentType":"NEED"}`)
	h.claim("1002", `{"sessionNo":"S1","intentType":"GREED"}`)
	stop, stopLoops := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	h.srv.startLoops(&wg, stop, context.Background(), time.Millisecond, time.Millisecond, 1)
	defer func() { stopLoops(); wg.Wait() }()

	m := h.srv.m
	pending := func() int {
		n, err := h.be.pending(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	time.Sleep(20 * time.Millisecond) // many ticks before the deadline
	if s, _ := h.be.store.Session(t.Context(), "S1"); s.Status != loot.StatusClaiming {
		t.Fatalf("settled before the deadline: %s", s.Status)
	}
	h.clock.Advance(60 * time.Second)
	eventually(t, "settled by the deadline loop", func() bool {
		return testutil.ToFloat64(m.settles.WithLabelValues("deadline", "settled")) == 1
	})
	if n := pending(); n != 2 {
		t.Fatalf("%d PENDING after both deliveries failed, want 2", n)
	}
	time.Sleep(20 * time.Millisecond) // many compensation passes inside the settler's lease
	if n := pending(); n != 2 {
		t.Fatalf("%d PENDING before the lease ended, want 2: compensation must wait for it", n)
	}
	h.clock.Advance(10 * time.Second) // the harness's settle lease
	eventually(t, "compensated", func() bool { return pending() == 0 })
	if got := testutil.ToFloat64(m.deliveries.WithLabelValues("compensation", "ok")); got != 2 {
		t.Errorf("compensation deliveries %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.deliveries.WithLabelValues("settle", "error")); got != 2 {
		t.Errorf("failed settle deliveries %v, want 2", got)
	}
	stopLoops()
	wg.Wait()
	for _, p := range []loot.PlayerID{1001, 1002} {
		if n := h.be.store.(*trackedStore).Holding(p, "SWORD_001"); n != 1 {
			t.Errorf("player %d holds %d, want 1", p, n)
		}
	}
}
