package loot_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// pauseInventory stalls its first Deliver (a GC pause, SIGSTOP) until
// resume is closed, before passing it on; reached is closed when it
// stalls.
type pauseInventory struct {
	loot.Inventory
	reached chan struct{}
	resume  chan struct{}
	once    sync.Once
}

func newPauseInventory(inv loot.Inventory) *pauseInventory {
	return &pauseInventory{Inventory: inv, reached: make(chan struct{}), resume: make(chan struct{})}
}

func (inv *pauseInventory) Deliver(ctx context.Context, g loot.Grant) error {
	inv.once.Do(func() {
		close(inv.reached)
		<-inv.resume
	})
	return inv.Inventory.Deliver(ctx, g)
}

// TestADeliveryIsCountedOnceWhoeverFinishesIt: a deliverer (the settler,
// then a compensation pass) stalls in its Deliver past its grant lease;
// another compensation pass leases the grant and delivers it. The stalled
// one then finishes its own Deliver and MarkDelivered (harmless: the
// Inventory dedups by grant number) but must not count the grant again:
// the Delivered of all the calls add up to the one item delivered.
func TestADeliveryIsCountedOnceWhoeverFinishesIt(t *testing.T) {
	const lease = 10 * time.Second
	t.Run("stale settler", func(t *testing.T) {
		w := newWorld(t)
		paused := newPauseInventory(w.store.Inventory())
		settler := w.node(loot.Config{Inventory: paused, SettleLease: lease})
		compensator := w.node(loot.Config{SettleLease: lease})
		w.claiming(settler, "S", 1, loot.RuleCount, 1001)
		w.claim(settler, "S", 1001, loot.Need)
		w.advance(claimWindow)
		type result struct {
			st  loot.Settlement
			err error
		}
		done := make(chan result)
		go func() {
			st, err := settler.Settle(context.Background(), "S")
			done <- result{st, err}
		}()
		<-paused.reached // recorded; the settler's delivery has not started
		w.advance(lease) // the grant's first lease ends
		rec, err := compensator.Recover(t.Context())
		if err != nil || rec.Delivered != 1 {
			t.Fatalf("Recover past the settler's grant lease = %+v, %v; want the grant delivered and counted", rec, err)
		}
		close(paused.resume)
		r := <-done
		if r.err != nil || r.st.Delivered != 0 {
			t.Errorf("the stale settler = Delivered %d, %v; want 0, nil: compensation delivered the grant, under a later lease", r.st.Delivered, r.err)
		}
		if n := w.store.Applied(loot.GrantNo("S", 1001, "RING-7")); n != 1 {
			t.Errorf("ring applied %d times, want 1", n)
		}
	})
	t.Run("stale compensation", func(t *testing.T) {
		w := newWorld(t)
		settler := w.node(loot.Config{Inventory: downInventory{}, SettleLease: lease})
		w.claiming(settler, "S", 1, loot.RuleCount, 1001)
		w.claim(settler, "S", 1001, loot.Need)
		w.advance(claimWindow)
		if st, err := settler.Settle(t.Context(), "S"); err == nil || st.Delivered != 0 {
			t.Fatalf("Settle with a failing inventory = Delivered %d, %v; want 0 and an error", st.Delivered, err)
		}
		paused := newPauseInventory(w.store.Inventory())
		slow, fast := w.node(loot.Config{Inventory: paused, SettleLease: lease}), w.node(loot.Config{SettleLease: lease})
		w.advance(lease) // the settler's grant lease ends
		done := make(chan loot.Recovered)
		go func() {
			rec, _ := slow.Recover(context.Background())
			done <- rec
		}()
		<-paused.reached                        // slow holds lease 1 and stalls in Deliver
		w.advance(loot.DefaultBackoff.Lease(1)) // lease 1 ends
		if rec, err := fast.Recover(t.Context()); err != nil || rec.Delivered != 1 {
			t.Fatalf("Recover past the stalled pass's lease = %+v, %v; want the grant delivered and counted", rec, err)
		}
		close(paused.resume)
		if rec := <-done; rec.Delivered != 0 {
			t.Errorf("the stalled compensation pass counted %d deliveries, want 0: another pass delivered the grant under a later lease", rec.Delivered)
		}
	})
}

// downInventory fails every Deliver without applying anything: an
// inventory service that is down.
type downInventory struct{}

func (downInventory) Deliver(context.Context, loot.Grant) error { return errLostAnswer }
