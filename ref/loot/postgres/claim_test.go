package postgres_test

import (
	"testing"
	"time"

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
	url, pool := clockedDB(t, clockBase)
	all := &statements{} // the empty marker counts every statement
	st := openStore(t, url, postgres.Options{TestClock: testClock, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = all }})
	defer st.Close()
	w := &world{t: t, url: url, pool: pool, st: st, clock: true}
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
