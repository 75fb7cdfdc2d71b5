package loottest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/ref/loot"
)

// noHistory is a FairnessProvider for which every player is new.
type noHistory struct{}

func (noHistory) Fairness(_ context.Context, _ string, ps []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	out := make(map[loot.PlayerID]loot.Fairness, len(ps))
	for _, p := range ps {
		out[p] = loot.Fairness{}
	}
	return out, nil
}

var _ loot.FairnessProvider = noHistory{}

// service returns a Service on handle s with the harness's inventory.
func (e *env) service(t *testing.T, s loot.Store) *loot.Service {
	t.Helper()
	svc, err := loot.New(loot.Config{
		Store: s, Inventory: e.h.Inventory(t, s), Fairness: noHistory{},
		SettleLease: leaseTime, Backoff: backoff,
	})
	ok(t, "loot.New", err)
	return svc
}

// checkInventoryOnce: a settler recorded its grants and died after
// delivering one of them, before marking it. Four Recovers on two nodes and
// repeated direct deliveries of every grant, all at once, must leave every
// item applied exactly once and every grant SUCCESS.
func checkInventoryOnce(t *testing.T, e *env) {
	if e.h.Inventory == nil {
		t.Skip("Harness.Inventory is nil")
	}
	a, b := e.store(t), e.open(t)
	sess := e.build(t, a, loot.StatusSettling, 3, team(4))
	d := decide(t, loot.Frozen{Session: sess, Claims: claims(t, a, sess.No)}, leaseTime)
	mustRecord(t, a, d)
	ok(t, "Deliver", e.h.Inventory(t, a).Deliver(ctx(t), d.Grants[0]))
	e.advance(t, leaseTime)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	report := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := range 4 {
		svc := e.service(t, []loot.Store{a, b}[i%2])
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Recover(ctx(t))
			report(err)
		}()
	}
	for i, g := range d.Grants {
		inv := e.h.Inventory(t, []loot.Store{b, a}[i%2])
		wg.Add(1)
		go func() {
			defer wg.Done()
			report(inv.Deliver(ctx(t), g))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Recover and Deliver: %v", err)
	}
	for _, g := range grants(t, a, sess.No) {
		if n := e.h.Applied(t, g.No); n != 1 || g.Status != loot.GrantSuccess {
			t.Errorf("grant %s: applied %d times, %s; want once, SUCCESS", g.No, n, g.Status)
		}
	}
}

// checkInventoryCancelRace: on 10 sessions a Settle on one node races a
// Cancel on another, then Recover runs. A canceled session must deliver
// no item to anyone, ever; a closed one, one to each winner.
func checkInventoryCancelRace(t *testing.T, e *env) {
	if e.h.Inventory == nil {
		t.Skip("Harness.Inventory is nil")
	}
	const sessions = 10
	a, b := e.store(t), e.open(t)
	settler, canceler := e.service(t, a), e.service(t, b)
	var nos []string
	for range sessions {
		nos = append(nos, e.build(t, a, loot.StatusClaiming, 2, team(3)).No)
	}
	e.advance(t, window)
	// Goroutine 2i cancels session i, 2i+1 settles it, all released at
	// once: each Cancel starts as its Settle does.
	for g, err := range Together(2*sessions, func(g int) error {
		no := nos[g/2]
		if g%2 == 0 {
			if _, err := canceler.Cancel(ctx(t), no); err != nil && !errors.Is(err, loot.ErrAlreadySettled) {
				return fmt.Errorf("Cancel(%s): %w", no, err)
			}
			return nil
		}
		if _, err := settler.Settle(ctx(t), no); err != nil && !errors.Is(err, loot.ErrCanceled) {
			return fmt.Errorf("Settle(%s): %w", no, err)
		}
		return nil
	}) {
		if err != nil {
			t.Errorf("goroutine %d: %v", g, err)
		}
	}
	e.advance(t, 100*window)
	_, err := e.service(t, b).Recover(ctx(t))
	ok(t, "Recover", err)
	for _, no := range nos {
		sess := session(t, a, no)
		winners := map[loot.PlayerID]bool{}
		for _, g := range grants(t, a, no) {
			winners[g.Player] = true
		}
		if sess.Status == loot.StatusCanceled && len(winners) > 0 {
			t.Errorf("canceled session %s has grants for %v", no, winners)
		}
		for _, p := range sess.Members {
			want := 0
			if winners[p] {
				want = 1
			}
			if n := e.h.Applied(t, loot.GrantNo(no, p, lootCode)); n != want {
				t.Errorf("%s session %s: player %d's item applied %d times, want %d", sess.Status, no, p, n, want)
			}
		}
		if sess.Status == loot.StatusClosed && len(winners) != sess.Quantity {
			t.Errorf("closed session %s granted %d items, want %d", no, len(winners), sess.Quantity)
		}
		if sess.Status != loot.StatusClosed && sess.Status != loot.StatusCanceled {
			t.Errorf("session %s ended %s", no, sess.Status)
		}
	}
}

// checkInventoryBatch: a BatchInventory's redeliveries. Of a settle's
// three grants one was applied alone (a settler that died mid-delivery);
// then a batch that also carries a grant number never recorded fails
// (after it any subset may have landed); then the batch is redelivered,
// again, with a number repeated, and from two nodes at once. Every item
// must be applied exactly once, and a BatchMarker store must mark the
// batch SUCCESS in order and refuse a number it never recorded.
func checkInventoryBatch(t *testing.T, e *env) {
	if e.h.Inventory == nil {
		t.Skip("Harness.Inventory is nil")
	}
	a, b := e.store(t), e.open(t)
	invA, okA := e.h.Inventory(t, a).(loot.BatchInventory)
	invB, okB := e.h.Inventory(t, b).(loot.BatchInventory)
	if !okA || !okB {
		t.Skip("Harness.Inventory is not a loot.BatchInventory")
	}
	sess := e.build(t, a, loot.StatusSettling, 3, team(4))
	d := decide(t, loot.Frozen{Session: sess, Claims: claims(t, a, sess.No)}, leaseTime)
	mustRecord(t, a, d)
	gs := d.Grants
	ok(t, "Deliver of the first grant alone", invA.Deliver(ctx(t), gs[0]))
	// Player 99 is no member: no grant of that number is recorded.
	bogus := loot.Grant{No: loot.GrantNo(sess.No, 99, lootCode), Session: sess.No, Player: 99, Loot: lootCode,
		Quantity: 1, Rank: 4, Status: loot.GrantPending}
	if err := invA.DeliverBatch(ctx(t), append(slices.Clone(gs), bogus)); err == nil {
		t.Errorf("DeliverBatch with grant %s, never recorded, = nil; want an error", bogus.No)
	}
	ok(t, "DeliverBatch redelivered", invB.DeliverBatch(ctx(t), gs))
	ok(t, "DeliverBatch redelivered again", invA.DeliverBatch(ctx(t), gs))
	ok(t, "DeliverBatch with a number repeated", invA.DeliverBatch(ctx(t), append(slices.Clone(gs), gs[1])))
	for g, err := range Together(4, func(g int) error {
		return []loot.BatchInventory{invA, invB}[g%2].DeliverBatch(ctx(t), gs)
	}) {
		if err != nil {
			t.Errorf("concurrent DeliverBatch %d: %v", g, err)
		}
	}
	for _, g := range gs {
		if n := e.h.Applied(t, g.No); n != 1 {
			t.Errorf("grant %s: applied %d times, want once", g.No, n)
		}
	}
	if n := e.h.Applied(t, bogus.No); n != 0 {
		t.Errorf("grant %s, never recorded: applied %d times, want never", bogus.No, n)
	}
	bm, isBM := a.(loot.BatchMarker)
	if !isBM {
		return
	}
	nos := grantNos(gs)
	got, err := bm.MarkDeliveredBatch(ctx(t), nos)
	ok(t, "MarkDeliveredBatch", err)
	if len(got) != len(nos) {
		t.Fatalf("MarkDeliveredBatch(%v) returned %d grants, want %d", nos, len(got), len(nos))
	}
	for i, g := range got {
		if g.No != nos[i] || g.Status != loot.GrantSuccess {
			t.Errorf("MarkDeliveredBatch grant %d = %s %s, want %s SUCCESS", i, g.No, g.Status, nos[i])
		}
	}
	_, err = bm.MarkDeliveredBatch(ctx(t), append(nos, bogus.No))
	wantErr(t, "MarkDeliveredBatch with a number never recorded", err, loot.ErrNotFound)
}
