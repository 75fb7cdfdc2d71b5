package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestLeaseScanDoesNotStallGrants: while a compensator's LeaseGrants
// transaction is open after its scan of the due grants (a compensator
// paused there: SIGSTOP, a VM pause), a settle's RecordGrants, whose grant
// INSERT goes into the index range that scan read, still commits. Under
// REPEATABLE READ the scan's next-key locks cover that range's gap and the
// INSERT waited for the compensator's COMMIT (innodb_lock_wait_timeout, 50
// s by default), which is why LeaseGrants runs READ COMMITTED (leaseTx);
// the test holds a transaction of leaseTx's options, with the store's own
// statements, under both server levels.
func TestLeaseScanDoesNotStallGrants(t *testing.T) {
	for _, iso := range serverIsolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test ./ref/loot/mysql -run '" + t.Name() + "'"
			ctx := t.Context()
			s, now := openAtNow(t, iso.params, Options{})
			// Open, StartClaiming and the claim before the deadline: 1 s
			// is ample for three commits on a loaded runner.
			deadline := now.Add(time.Second)
			sess, _, err := s.Open(ctx, loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
				Deadline: deadline, Rule: loot.RuleCount, Members: []loot.PlayerID{1}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartClaiming(ctx, sess.No); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Claim(ctx, sess.No, 1, loot.Need); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(deadline) + 10*time.Millisecond)
			fz, err := s.BeginSettle(ctx, sess.No, time.Minute)
			if err != nil {
				t.Fatalf("BeginSettle: %v%s", err, reproduce)
			}
			d, err := loot.Decide(fz, map[loot.PlayerID]loot.Fairness{1: {}}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}

			held, err := s.db.BeginTx(ctx, leaseTx)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Rollback()
			if err := held.QueryRowContext(ctx, s.q.now).Scan(&now); err != nil {
				t.Fatal(err)
			}
			rows, err := held.QueryContext(ctx, s.q.leaseSelect, now, 100)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}

			// 5 s is far above a commit's time and far below the lock
			// wait's 50 s: a RecordGrants still waiting then is stalled.
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := s.RecordGrants(rctx, d); err != nil {
				t.Fatalf("RecordGrants while a lease scan's transaction is open: %v (the grant INSERT waited for it)%s", err, reproduce)
			}
		})
	}
}
