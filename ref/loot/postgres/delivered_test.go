package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
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
