package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestClaimIsOneStatementWhateverTheAnswer: a claim is one statement (one
// round trip) whether it writes, repeats or is refused, since the read
// that explains a write of nothing rides in the statement that wrote; and
// each answer is still the one loot.Store documents.
func TestClaimIsOneStatementWhateverTheAnswer(t *testing.T) {
	all := &statements{} // the empty marker counts every statement
	w := tracedWorld(t, all)
	st := w.st
	spec := loot.Spec{No: "C-1", Dungeon: "ABYSS-3", Loot: "L", Quantity: 1, Deadline: w.now().Add(time.Minute),
		Rule: loot.RuleSeeded, Members: team(2)}
	if _, _, err := st.Open(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartClaiming(t.Context(), spec.No); err != nil {
		t.Fatal(err)
	}
	loottest.RunClaimCost(t, loottest.ClaimCost{
		Store: st, Session: spec.No, Player: spec.Members[0], Base: clockBase,
		Advance: w.advance, Count: all.n.Load, Unit: "statements",
		Reproduce: "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestClaimIsOneStatementWhateverTheAnswer ./ref/loot/postgres/",
	})
}

// TestASettleIsTwoRoundTrips: a status change that takes effect
// (StartClaiming, BeginSettle, RecordGrants, Cancel) is one round trip, so
// a settle to CLOSED with its grants PENDING is two; a refusal or a repeat
// is at most two (the write that matched nothing, then the read that says
// which guard refused); a delivery (the store's Inventory, then
// MarkDelivered) is one round trip a call, a batch (DeliverBatch,
// MarkDeliveredBatch) too; and a Service's settle through delivery is at
// most 2 + 2 (loottest.DeliverBudget: BeginSettle, RecordGrants, one
// DeliverBatch, one MarkDeliveredBatch).
func TestASettleIsTwoRoundTrips(t *testing.T) {
	var rt counter // bench_test.go's: a query, or a batch of them, is one round trip
	w := tracedWorld(t, &rt)
	st := w.st
	loottest.RunSettleCost(t, loottest.SettleCost{
		Store: st, Base: clockBase, Advance: w.advance,
		Count: rt.rtts.Load, Unit: "round trips", Refused: 2, Inventory: st.Inventory(nil),
		Reproduce: "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestASettleIsTwoRoundTrips ./ref/loot/postgres/",
	})
}

// tracedWorld is a world on a store of a new database, its test clock at
// clockBase, whose pool traces its statements with tr; the store closes
// with t.
func tracedWorld(t *testing.T, tr pgx.QueryTracer) *world {
	t.Helper()
	url, pool := clockedDB(t, clockBase)
	st := openStore(t, url, postgres.Options{TestClock: testClock, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr }})
	t.Cleanup(func() { st.Close() })
	return &world{t: t, url: url, pool: pool, st: st, clock: true}
}
