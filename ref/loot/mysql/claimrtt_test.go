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
	eachIsolationCounted(t, func(t *testing.T, s *mysql.Store, clock *testClock, sent *writes) {
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

// TestEveryWriteIsOneRoundTripWhateverTheAnswer: StartClaiming,
// BeginSettle, RecordGrants and Cancel are each one packet sent (one round
// trip: the transaction, the conditional UPDATE, the writes it allows, the
// reads that answer it and the COMMIT), whether they take effect, repeat or
// are refused, under both isolation levels; so a settle to CLOSED with its
// grants PENDING is two. So are the Inventory's Deliver and MarkDelivered.
func TestEveryWriteIsOneRoundTripWhateverTheAnswer(t *testing.T) {
	eachIsolationCounted(t, func(t *testing.T, s *mysql.Store, clock *testClock, sent *writes) {
		loottest.RunSettleCost(t, loottest.SettleCost{
			Store: s, Base: base,
			Advance: func(d time.Duration) { clock.advance(t, d) },
			Count:   sent.n.Load, Unit: "packets sent", Refused: 1, Inventory: s.Inventory(),
			Reproduce: "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run '" + t.Name() + "' ./ref/loot/mysql/",
		})
	})
}

// eachIsolationCounted runs f, under each isolation level, on a store of a
// new database reading clock, whose packets sent are counted in sent.
func eachIsolationCounted(t *testing.T, f func(t *testing.T, s *mysql.Store, clock *testClock, sent *writes)) {
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
			f(t, s, clock, &sent)
		})
	}
}
