package mysql_test

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestEveryWriteIsOneRoundTripWhateverTheAnswer: StartClaiming,
// BeginSettle, RecordGrants and Cancel are each one packet sent (one round
// trip: the transaction, the conditional UPDATE, the writes it allows, the
// reads that answer it and the COMMIT), whether they take effect, repeat or
// are refused, under both isolation levels; so a settle to CLOSED with its
// grants PENDING is two. So are the Inventory's Deliver and MarkDelivered.
func TestEveryWriteIsOneRoundTripWhateverTheAnswer(t *testing.T) {
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
			loottest.RunSettleCost(t, loottest.SettleCost{
				Store: s, Base: base,
				Advance: func(d time.Duration) { clock.advance(t, d) },
				Count:   sent.n.Load, Unit: "packets sent", Refused: 1, Inventory: s.Inventory(),
				Reproduce: "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run '" + t.Name() + "' ./ref/loot/mysql/",
			})
		})
	}
}
