package loot_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// countedInventory is the memory store's BatchInventory, counting its
// calls; failBatch makes each DeliverBatch apply its first grant and then
// fail (a timeout after part of the batch landed).
type countedInventory struct {
	*memory.Inventory
	failBatch bool
	mu        sync.Mutex
	deliver   int // Deliver calls
	batches   int // DeliverBatch calls
}

func (inv *countedInventory) Deliver(ctx context.Context, g loot.Grant) error {
	inv.mu.Lock()
	inv.deliver++
	inv.mu.Unlock()
	return inv.Inventory.Deliver(ctx, g)
}

func (inv *countedInventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	inv.mu.Lock()
	inv.batches++
	inv.mu.Unlock()
	if inv.failBatch {
		if err := inv.Inventory.Deliver(ctx, gs[0]); err != nil {
			return err
		}
		return errors.New("inventory timeout after the first grant")
	}
	return inv.Inventory.DeliverBatch(ctx, gs)
}

// countedStore is the memory store, counting its marks.
type countedStore struct {
	*memory.Store
	mu      sync.Mutex
	marks   int // MarkDelivered calls
	batches int // MarkDeliveredBatch calls
}

func (s *countedStore) MarkDelivered(ctx context.Context, no string) (loot.Grant, error) {
	s.mu.Lock()
	s.marks++
	s.mu.Unlock()
	return s.Store.MarkDelivered(ctx, no)
}

func (s *countedStore) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	s.mu.Lock()
	s.batches++
	s.mu.Unlock()
	return s.Store.MarkDeliveredBatch(ctx, nos)
}

// TestASettleDeliversItsGrantsInOneBatch: with a BatchInventory and a
// BatchMarker store, a settle of 3 items delivers them in one DeliverBatch
// and marks them in one MarkDeliveredBatch (no call per grant), each item
// once, each counted as the settler's. A DeliverBatch that fails after
// applying part of the batch is redone grant by grant with the same
// numbers: every item still lands once, and is counted once.
//
//	go test -count=1 -run TestASettleDeliversItsGrantsInOneBatch ./ref/loot
func TestASettleDeliversItsGrantsInOneBatch(t *testing.T) {
	for _, failBatch := range []bool{false, true} {
		name := map[bool]string{false: "batch", true: "failed-batch"}[failBatch]
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			st := &countedStore{Store: w.store}
			inv := &countedInventory{Inventory: w.store.Inventory(), failBatch: failBatch}
			svc := w.node(loot.Config{Store: st, Inventory: inv})
			w.claiming(svc, "S", 3, loot.RuleCount, 1001, 1002, 1003, 1004)
			for _, p := range []loot.PlayerID{1001, 1002, 1003, 1004} {
				w.claim(svc, "S", p, loot.Need)
			}
			w.advance(claimWindow)
			out, err := svc.Settle(context.Background(), "S")
			if err != nil || out.Delivered != 3 {
				t.Fatalf("Settle = %d delivered, %v; want 3, nil", out.Delivered, err)
			}
			for _, g := range out.Grants {
				if n := w.store.Applied(g.No); n != 1 || g.Status != loot.GrantSuccess {
					t.Errorf("grant %s: applied %d times, %s; want once, SUCCESS", g.No, n, g.Status)
				}
			}
			want := [4]int{1, 0, 1, 0} // DeliverBatch, Deliver, MarkDeliveredBatch, MarkDelivered
			if failBatch {
				want = [4]int{1, 3, 0, 3} // the batch, then grant by grant
			}
			if got := [4]int{inv.batches, inv.deliver, st.batches, st.marks}; got != want {
				t.Errorf("calls (DeliverBatch, Deliver, MarkDeliveredBatch, MarkDelivered) = %v, want %v; reproduce: go test -count=1 -run 'TestASettleDeliversItsGrantsInOneBatch/%s' ./ref/loot", got, want, name)
			}
		})
	}
}
