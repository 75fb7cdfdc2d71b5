package mysql

import (
	"slices"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestSettleCASWaitsForAClaimInFlight is TestClaimWaitsForTheSettleCAS the
// other way round: a claim's statement ran before the deadline and its
// transaction has not committed when a settler's CAS arrives after it. The
// CAS must wait for the claim (its shared lock on the session row), and
// the frozen claims it returns must include it: a claim on record that the
// settler never ranked is the source document's bug. It runs the store's
// own claim statement in a held transaction, on the database's clock.
func TestSettleCASWaitsForAClaimInFlight(t *testing.T) {
	for _, iso := range serverIsolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			reproduce := "; reproduce: go test ./ref/loot/mysql -run '" + t.Name() + "'"
			s, now := openAtNow(t, iso.params, Options{})
			// Open and StartClaiming (two commits, each an fsync) and the
			// held claim's statement must all run before the deadline, or
			// the claim is refused and the test fails for the runner's
			// load, not the store: 2 s is ample on a loaded 2-core runner
			// under -race, and costs 2 s of sleep per isolation level.
			deadline := now.Add(2 * time.Second)
			sess, _, err := s.Open(t.Context(), loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
				Deadline: deadline, Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartClaiming(t.Context(), sess.No); err != nil {
				t.Fatal(err)
			}
			claim, err := s.db.BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer claim.Rollback()
			res, err := claim.ExecContext(t.Context(), s.q.claim, loot.Need, loot.Need.Priority(), 2, sess.No)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("the held claim wrote %d rows, want 1 (ran after the deadline?)%s", n, reproduce)
			}
			time.Sleep(time.Until(deadline) + 50*time.Millisecond)

			done := make(chan loot.Frozen, 1)
			go func() {
				fz, err := s.BeginSettle(t.Context(), sess.No, time.Minute)
				if err != nil {
					t.Errorf("BeginSettle: %v", err)
				}
				done <- fz
			}()
			select {
			case fz := <-done:
				t.Fatalf("BeginSettle returned %v while a claim held the session: it did not wait for it%s", fz.Claims, reproduce)
			case <-time.After(300 * time.Millisecond):
			}
			if err := claim.Commit(); err != nil {
				t.Fatal(err)
			}
			fz := <-done
			var players []loot.PlayerID
			for _, c := range fz.Claims {
				players = append(players, c.Player)
			}
			if !slices.Equal(players, []loot.PlayerID{2}) {
				t.Fatalf("frozen claims %v, want the claim that committed while the CAS waited (player 2)%s", fz.Claims, reproduce)
			}
		})
	}
}
