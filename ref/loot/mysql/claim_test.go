package mysql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
)

// TestClaimWaitsForTheSettleCAS: a settler's CAS holds the session row
// (its transaction not committed yet) while a claim judged by a clock
// still before the deadline arrives. The claim must wait for the CAS and
// then be refused: a claim that read the session without a lock (an
// INSERT ... SELECT under READ COMMITTED without LOCK IN SHARE MODE) would
// be written beside the CAS and land after the claims were frozen. Under
// both isolation levels.
func TestClaimWaitsForTheSettleCAS(t *testing.T) {
	for _, iso := range isolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			params := iso.params
			dsn := testserver.MariaDB(t)
			clock := newTestClock(t, dsn)
			s := open(t, dsn+params)
			sess, _, err := s.Open(t.Context(), loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
				Deadline: base.Add(time.Second), Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartClaiming(t.Context(), sess.No); err != nil {
				t.Fatal(err)
			}
			clock.advance(t, time.Second-time.Microsecond) // 1µs before the deadline

			// The CAS of a settler whose statement ran at the deadline,
			// on another connection, not committed yet.
			cas, err := s.DB().BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cas.Rollback()
			if _, err := cas.ExecContext(t.Context(), `UPDATE loot_session SET status = 'SETTLING', fence = fence + 1,
				settle_until = ? WHERE session_no = ? AND status = 'CLAIMING' AND deadline_at <= ?`,
				sess.Deadline.Add(time.Minute), sess.No, sess.Deadline); err != nil {
				t.Fatal(err)
			}

			done := make(chan error, 1)
			go func() {
				_, _, err := s.Claim(t.Context(), sess.No, 2, loot.Need)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("Claim returned %v while the settle CAS held the session: it did not wait for it; reproduce: go test ./ref/loot/mysql -run '%s'", err, t.Name())
			case <-time.After(300 * time.Millisecond):
			}
			if err := cas.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, loot.ErrClaimsClosed) {
				t.Fatalf("Claim after the CAS committed = %v, want ErrClaimsClosed; reproduce: go test ./ref/loot/mysql -run '%s'", err, t.Name())
			}
			if cs, err := s.Claims(t.Context(), sess.No); err != nil || len(cs) != 0 {
				t.Fatalf("claims after the CAS = %v, %v; want none", cs, err)
			}
		})
	}
}
