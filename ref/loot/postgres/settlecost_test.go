package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestASettleIsTwoRoundTrips: a status change that takes effect
// (StartClaiming, BeginSettle, RecordGrants, Cancel) is one round trip, so
// a settle to CLOSED with its grants PENDING is two; a refusal or a repeat
// is at most two (the write that matched nothing, then the read that says
// which guard refused); a delivery (the store's Inventory, then
// MarkDelivered) is one round trip a call.
func TestASettleIsTwoRoundTrips(t *testing.T) {
	url, pool := clockedDB(t, clockBase)
	var rt counter // bench_test.go's: a query, or a batch of them, is one round trip
	st := openStore(t, url, postgres.Options{TestClock: testClock, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = &rt }})
	defer st.Close()
	w := &world{t: t, url: url, pool: pool, st: st, clock: true}
	loottest.RunSettleCost(t, loottest.SettleCost{
		Store: st, Base: clockBase, Advance: w.advance,
		Count: rt.rtts.Load, Unit: "round trips", Refused: 2, Inventory: st.Inventory(nil),
		Reproduce: "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestASettleIsTwoRoundTrips ./ref/loot/postgres/",
	})
}
