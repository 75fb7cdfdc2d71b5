package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// recorded opens session no on st (test clock on pool) with members each
// claiming NEED, passes its deadline and records the settler's decision:
// a CLOSED session with quantity PENDING grants, nothing delivered.
func recorded(t *testing.T, st *postgres.Store, pool *pgxpool.Pool, no string, quantity int, members ...loot.PlayerID) []loot.Grant {
	t.Helper()
	ctx := t.Context()
	var now time.Time
	if err := pool.QueryRow(ctx, `SELECT now FROM `+testClock).Scan(&now); err != nil {
		t.Fatal(err)
	}
	spec := loot.Spec{No: no, Dungeon: "D", Loot: "RING-7", Quantity: quantity, Deadline: now.Add(time.Minute), Rule: loot.RuleCount, Members: members}
	if _, _, err := st.Open(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartClaiming(ctx, no); err != nil {
		t.Fatal(err)
	}
	fair := map[loot.PlayerID]loot.Fairness{}
	for _, p := range members {
		if _, _, err := st.Claim(ctx, no, p, loot.Need); err != nil {
			t.Fatal(err)
		}
		fair[p] = loot.Fairness{}
	}
	if _, err := pool.Exec(ctx, `UPDATE `+testClock+` SET now = now + interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	fz, err := st.BeginSettle(ctx, no, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	d, err := loot.Decide(fz, fair, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordGrants(ctx, d); err != nil {
		t.Fatal(err)
	}
	return d.Grants
}

func ledgerRows(t *testing.T, pool *pgxpool.Pool, grantNo string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM loot_inventory WHERE grant_no = $1`, grantNo).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInventoryWithoutEffectDeliversOnceUnderConcurrency: the one-statement
// delivery, by 8 deliverers per grant on two nodes at once: every call
// succeeds, one ledger row per grant, every grant SUCCESS, each winner
// holds one item; an unknown grant is ErrNotFound.
func TestInventoryWithoutEffectDeliversOnceUnderConcurrency(t *testing.T) {
	url, pool := clockedDB(t, clockBase)
	a, b := openStore(t, url, postgres.Options{TestClock: testClock}), openStore(t, url, postgres.Options{TestClock: testClock})
	defer a.Close()
	defer b.Close()
	gs := recorded(t, a, pool, "S-1", 2, 1, 2, 3)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		inv := []*postgres.Store{a, b}[i%2].Inventory(nil)
		g := gs[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- inv.Deliver(t.Context(), g)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Deliver: %v", err)
		}
	}
	recs, err := a.Grants(t.Context(), "S-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range recs {
		n := ledgerRows(t, pool, g.No)
		held, err := a.Inventory(nil).Holding(t.Context(), g.Player, g.Loot)
		if err != nil || n != 1 || g.Status != loot.GrantSuccess || held != 1 {
			t.Errorf("grant %s: %d ledger rows, %s, player %d holds %d (%v); want 1, SUCCESS, 1", g.No, n, g.Status, g.Player, held, err)
		}
	}
	unknown := gs[0]
	unknown.No = loot.GrantNo("S-1", 9, "RING-7")
	if err := a.Inventory(nil).Deliver(t.Context(), unknown); !errors.Is(err, loot.ErrNotFound) {
		t.Errorf("Deliver of a grant never recorded = %v, want ErrNotFound", err)
	}
}

// TestInventoryEffectErrorLeavesTheGrantPending: an Effect that fails rolls
// the whole delivery back (no ledger row, no item, the grant PENDING); the
// next delivery applies the Effect once and marks the grant.
func TestInventoryEffectErrorLeavesTheGrantPending(t *testing.T) {
	url, pool := clockedDB(t, clockBase)
	if _, err := pool.Exec(t.Context(), effectsTable); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, url, postgres.Options{TestClock: testClock})
	defer st.Close()
	g := recorded(t, st, pool, "S-1", 1, 1, 2)[0]
	boom := errors.New("inventory service down")
	fail := true
	inv := st.Inventory(func(ctx context.Context, tx pgx.Tx, g loot.Grant) error {
		if err := countEffect(ctx, tx, g); err != nil {
			return err
		}
		if fail {
			return boom
		}
		return nil
	})
	if err := inv.Deliver(t.Context(), g); !errors.Is(err, boom) {
		t.Fatalf("Deliver with a failing Effect = %v, want its error", err)
	}
	var effects int
	count := func() {
		t.Helper()
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM test_effects`).Scan(&effects); err != nil {
			t.Fatal(err)
		}
	}
	count()
	gs, err := st.Grants(t.Context(), "S-1")
	if err != nil {
		t.Fatal(err)
	}
	if n := ledgerRows(t, pool, g.No); n != 0 || effects != 0 || gs[0].Status != loot.GrantPending {
		t.Fatalf("after a failed Effect: %d ledger rows, %d effects, grant %s; want 0, 0, PENDING", n, effects, gs[0].Status)
	}
	fail = false
	for range 2 {
		if err := inv.Deliver(t.Context(), g); err != nil {
			t.Fatalf("Deliver: %v", err)
		}
	}
	count()
	if gs, err = st.Grants(t.Context(), "S-1"); err != nil {
		t.Fatal(err)
	}
	if n := ledgerRows(t, pool, g.No); n != 1 || effects != 1 || gs[0].Status != loot.GrantSuccess {
		t.Fatalf("after two Delivers: %d ledger rows, %d effects, grant %s; want 1, 1, SUCCESS", n, effects, gs[0].Status)
	}
}
