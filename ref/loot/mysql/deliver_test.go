package mysql_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestASettleThroughDeliveryIsThreeRoundTrips: a Service's settle through
// the Store's own Inventory is BeginSettle, RecordGrants and one
// DeliverBatch: the MarkDeliveredBatch after it is answered from the
// grants the DeliverBatch transaction read back (delivered.go), with no
// round trip (four without it), under both isolation levels. The answer is
// what the database holds: each grant SUCCESS with the attempt count the
// settler's lease gave it (0), so Settle counts every delivery its own,
// and one ledger row each.
func TestASettleThroughDeliveryIsThreeRoundTrips(t *testing.T) {
	const run = "ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run TestASettleThroughDeliveryIsThreeRoundTrips ./ref/loot/mysql/"
	eachIsolationCounted(t, func(t *testing.T, s *mysql.Store, clock *testClock, sent *writes) {
		ctx := t.Context()
		no := claimed(t, s, clock, "T-1", 3, 4)
		svc, err := loot.New(loot.Config{Store: s, Inventory: s.Inventory(), Fairness: memory.NewHistory()})
		if err != nil {
			t.Fatal(err)
		}
		before := sent.n.Load()
		st, err := svc.Settle(ctx, no)
		if n := sent.n.Load() - before; err != nil || n != 3 || st.Delivered != 3 {
			t.Fatalf("Settle through delivery: %v, %d delivered, %d round trips; want 3 delivered in 3 round trips (%s)", err, st.Delivered, n, run)
		}
		gs, err := s.Grants(ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gs, st.Grants) {
			t.Fatalf("Settle answered grants %v; the database holds %v (%s)", st.Grants, gs, run)
		}
		for _, g := range gs {
			if n, err := s.Inventory().Applied(ctx, g.No); g.Status != loot.GrantSuccess || g.Attempts != 0 || n != 1 || err != nil {
				t.Errorf("grant %s after Settle: %s, %d attempts, applied %d (%v); want SUCCESS, 0, once (%s)", g.No, g.Status, g.Attempts, n, err, run)
			}
		}
	})
}

// TestConcurrentBatchDeliveriesMarkAsTheDatabaseSays: callers at once,
// on a Store with and without Options.Batch, deliver batches through the
// Store's own Inventory and mark them: 4 callers the same batch of one
// session's grants, one the same with a number never recorded added, and
// one its own session's grants. The one with the unknown number alone
// fails (loot.ErrNotFound); every MarkDeliveredBatch (answered from a
// DeliverBatch's rows, or by its statement when another caller took them
// first) returns what the database holds, and each grant has one ledger
// row. Run with -race: the delivered map and the batcher are shared by the
// callers.
func TestConcurrentBatchDeliveriesMarkAsTheDatabaseSays(t *testing.T) {
	const run = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestConcurrentBatchDeliveriesMarkAsTheDatabaseSays ./ref/loot/mysql/"
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			ctx := t.Context()
			dsn := testserver.MariaDB(t)
			clock := newTestClock(t, dsn)
			s := openOpts(t, dsn, mysql.Options{Batch: batch})
			shared, own := recordedGrants(t, s, clock, "C-1", 3), recordedGrants(t, s, clock, "C-2", 2)
			bogus := shared[0]
			bogus.No = "C-1:404"
			batches := [][]loot.Grant{shared, shared, shared, shared, append(slices.Clone(shared), bogus), own}
			answers := make([][]loot.Grant, len(batches))
			errs := make([]error, len(batches))
			var wg sync.WaitGroup
			for i, gs := range batches {
				wg.Go(func() {
					if errs[i] = s.Inventory().DeliverBatch(ctx, gs); errs[i] == nil {
						answers[i], errs[i] = s.MarkDeliveredBatch(ctx, nos(gs))
					}
				})
			}
			wg.Wait()
			for i, gs := range batches {
				if i == 4 {
					if !errors.Is(errs[i], loot.ErrNotFound) {
						t.Errorf("caller %d, with %s never recorded: %v, want loot.ErrNotFound (%s)", i, bogus.No, errs[i], run)
					}
					continue
				}
				held, err := s.Grants(ctx, gs[0].Session)
				if err != nil {
					t.Fatal(err)
				}
				if errs[i] != nil || !slices.Equal(answers[i], held) {
					t.Errorf("caller %d: %v, marked %v; the database holds %v (%s)", i, errs[i], answers[i], held, run)
				}
			}
			var ledger int
			if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM loot_inventory`).Scan(&ledger); err != nil || ledger != len(shared)+len(own) {
				t.Errorf("%d ledger rows (%v) for %d grants (%s)", ledger, err, len(shared)+len(own), run)
			}
		})
	}
}

// claimed opens session no with quantity items and members 1..team, every
// member claiming NEED, and moves the clock past its deadline: due to
// settle.
func claimed(t *testing.T, s *mysql.Store, clock *testClock, no string, quantity, team int) string {
	t.Helper()
	ctx := t.Context()
	members := make([]loot.PlayerID, team)
	for i := range members {
		members[i] = loot.PlayerID(i + 1)
	}
	sess, _, err := s.Open(ctx, loot.Spec{No: no, Dungeon: "D", Loot: "L", Quantity: quantity,
		Deadline: clock.now(t).Add(time.Minute), Rule: loot.RuleCount, Members: members})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartClaiming(ctx, sess.No); err != nil {
		t.Fatal(err)
	}
	for _, p := range members {
		if _, _, err := s.Claim(ctx, sess.No, p, loot.Need); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(t, time.Minute)
	return sess.No
}

// recordedGrants settles session no (quantity items, a team one larger)
// to CLOSED and returns its grants, PENDING.
func recordedGrants(t *testing.T, s *mysql.Store, clock *testClock, no string, quantity int) []loot.Grant {
	t.Helper()
	ctx := t.Context()
	claimed(t, s, clock, no, quantity, quantity+1)
	fz, err := s.BeginSettle(ctx, no, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	d, err := decideNew(fz)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordGrants(ctx, d); err != nil {
		t.Fatal(err)
	}
	gs, err := s.Grants(ctx, no)
	if err != nil || len(gs) != quantity {
		t.Fatalf("grants of %s: %d, %v; want %d", no, len(gs), err, quantity)
	}
	return gs
}

// nos are the numbers of gs, in order.
func nos(gs []loot.Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.No
	}
	return out
}
