package postgres_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestASettleThroughDeliveryIsThreeRoundTrips: a Service's settle through
// the Store's own Inventory (no Effect, no Lock) is BeginSettle,
// RecordGrants and one DeliverBatch: the MarkDeliveredBatch after it is
// answered from the grants the DeliverBatch statement returned
// (delivered.go), with no round trip (four without it). The answer is
// what the database holds: each grant SUCCESS with the attempt count the
// settler's lease gave it (0), so Settle counts every delivery its own.
func TestASettleThroughDeliveryIsThreeRoundTrips(t *testing.T) {
	const run = "ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run TestASettleThroughDeliveryIsThreeRoundTrips ./ref/loot/postgres/"
	var rt counter
	w := tracedWorld(t, &rt)
	if _, err := w.pool.Exec(t.Context(), effectsTable); err != nil { // w.state reads it
		t.Fatal(err)
	}
	w.claiming("T-1", 3, team(4), time.Minute)
	w.advance(time.Minute)
	svc, err := loot.New(loot.Config{Store: w.st, Inventory: w.st.Inventory(nil), Fairness: memory.NewHistory()})
	if err != nil {
		t.Fatal(err)
	}
	before := rt.rtts.Load()
	st, err := svc.Settle(t.Context(), "T-1")
	if n := rt.rtts.Load() - before; err != nil || n != 3 || st.Delivered != 3 {
		t.Fatalf("Settle through delivery: %v, %d delivered, %d round trips; want 3 delivered in 3 round trips (%s)", err, st.Delivered, n, run)
	}
	gs, err := w.st.Grants(t.Context(), "T-1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(gs, st.Grants, func(a, b loot.Grant) bool { return a == b }) {
		t.Fatalf("Settle answered grants %v; the database holds %v (%s)", st.Grants, gs, run)
	}
	if s := w.state("T-1"); s.delivered() != 3 || s.ledger != 3 {
		t.Fatalf("after Settle: %v; want 3 grants SUCCESS with 3 ledger rows (%s)", s, run)
	}
}

// TestConcurrentBatchDeliveriesMarkAsTheDatabaseSays: 4 callers at once
// deliver the same batch through the Store's own Inventory and mark it;
// every MarkDeliveredBatch (answered from a DeliverBatch's rows, or by its
// statement when another caller took them first) returns what the
// database holds, and each grant has one ledger row. Run with -race: the
// delivered map is shared by the callers.
func TestConcurrentBatchDeliveriesMarkAsTheDatabaseSays(t *testing.T) {
	const run = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestConcurrentBatchDeliveriesMarkAsTheDatabaseSays ./ref/loot/postgres/"
	url, pool := clockedDB(t, clockBase)
	st := openStore(t, url, postgres.Options{TestClock: testClock})
	defer st.Close()
	gs := recorded(t, st, pool, "C-1", 3, 1, 2, 3, 4)
	nos := make([]string, len(gs))
	for i, g := range gs {
		nos[i] = g.No
	}
	inv := st.Inventory(nil)
	answers := make([][]loot.Grant, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			if errs[i] = inv.DeliverBatch(t.Context(), gs); errs[i] == nil {
				answers[i], errs[i] = st.MarkDeliveredBatch(t.Context(), nos)
			}
		})
	}
	wg.Wait()
	held, err := st.Grants(t.Context(), "C-1")
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range answers {
		if errs[i] != nil || !slices.Equal(a, held) {
			t.Fatalf("caller %d: %v, marked %v; the database holds %v (%s)", i, errs[i], a, held, run)
		}
	}
	var ledger int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM loot_inventory`).Scan(&ledger); err != nil || ledger != len(gs) {
		t.Fatalf("%d ledger rows (%v) for %d grants (%s)", ledger, err, len(gs), run)
	}
}
