package mysql_test

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestClaimIsOneRoundTripWhateverTheAnswer: a claim is one packet sent
// (one round trip: its transaction, the write, the read that answers it
// and the commit) whether it writes, repeats or is refused, under both
// isolation levels; and each answer is still the one loot.Store documents.
func TestClaimIsOneRoundTripWhateverTheAnswer(t *testing.T) {
	for _, iso := range isolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			dsn := testserver.MariaDB(t)
			clock := newTestClock(t, dsn)
			var sent writes
			s, err := mysql.Open(t.Context(), dsn+iso.params, mysql.Options{ClockTable: clockTable, Config: sent.count})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sess, _, err := s.Open(t.Context(), loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
				Deadline: base.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartClaiming(t.Context(), sess.No); err != nil {
				t.Fatal(err)
			}
			loottest.RunClaimCost(t, loottest.ClaimCost{
				Store: s, Session: sess.No, Player: 1, Base: base,
				Advance: func(d time.Duration) { clock.advance(t, d) },
				Count:   sent.n.Load, Unit: "packets sent",
				Reproduce: "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run '" + t.Name() + "' ./ref/loot/mysql/",
			})
		})
	}
}
