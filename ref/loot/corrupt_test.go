package loot_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// A session row whose quantity is below 1 can only be corrupt or edited by
// hand: Spec.Normalize refuses it at Open and both SQL schemas CHECK it.
// These tests are the defence behind those two: a settler handed such a
// row, and an audit of a snapshot that records one.

// corruptQuantity is a store whose sessions read back with quantity q,
// as a row edited by hand (UPDATE ... SET quantity = q) would.
type corruptQuantity struct {
	loot.Store
	q int
}

func (s corruptQuantity) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	fz, err := s.Store.BeginSettle(ctx, no, lease)
	fz.Session.Quantity = s.q
	return fz, err
}

func (s corruptQuantity) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	snap, err := s.Store.Snapshot(ctx, no)
	snap.Quantity = s.q
	return snap, err
}

// TestSettleRefusesANonPositiveQuantity: with quantity -1 the ranker used
// to stop at len(winners) == quantity, which never comes, so every
// claimant won. The settler now refuses the row and records nothing.
func TestSettleRefusesANonPositiveQuantity(t *testing.T) {
	for _, q := range []int{0, -1} {
		w := newWorld(t)
		no := fmt.Sprintf("Q%d", q)
		svc := w.node(loot.Config{Store: corruptQuantity{w.store, q}})
		w.claiming(svc, no, 1, loot.RuleCount, 1001, 1002, 1003)
		for _, p := range []loot.PlayerID{1001, 1002, 1003} {
			w.claim(svc, no, p, loot.Need)
		}
		w.advance(claimWindow)
		st, err := svc.Settle(t.Context(), no)
		if !errors.Is(err, loot.ErrBadArgument) || !strings.Contains(err.Error(), "quantity") {
			t.Errorf("quantity %d: Settle = %d grants, %v; want ErrBadArgument naming the quantity", q, len(st.Grants), err)
		}
		if gs, _ := w.store.Grants(t.Context(), no); len(gs) != 0 {
			t.Errorf("quantity %d: %d grants recorded, want none", q, len(gs))
		}
		if got := w.holders(1001, 1002, 1003); len(got) != 0 {
			t.Errorf("quantity %d: rings held %v, want none", q, got)
		}
	}
}

// TestAuditRefusesASnapshotWithANonPositiveQuantity: a snapshot whose
// quantity reads -1, and whose winners are every claimant (what the old
// ranker made of it), used to replay: -1 let everyone win again, so the
// audit said replays: true. It must say the snapshot does not explain its
// result.
func TestAuditRefusesASnapshotWithANonPositiveQuantity(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 3, loot.RuleCount, 1001, 1002, 1003)
	for _, p := range []loot.PlayerID{1001, 1002, 1003} {
		w.claim(svc, "S", p, loot.Need)
	}
	w.advance(claimWindow)
	if st, err := svc.Settle(t.Context(), "S"); err != nil || len(st.Grants) != 3 {
		t.Fatalf("Settle = %d grants, %v; want all three claimants to win three items", len(st.Grants), err)
	}
	auditor := w.node(loot.Config{Store: corruptQuantity{w.store, -1}})
	_, err := auditor.Audit(t.Context(), "S")
	var re *loot.ReplayError
	if !errors.As(err, &re) || !strings.Contains(re.What, "quantity") {
		t.Errorf("Audit of a snapshot with quantity -1 = %v, want a *ReplayError about the quantity", err)
	}
}
