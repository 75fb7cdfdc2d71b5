package mysql_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestSchemaRefusesCorruptRows: every hand edit below breaks an
// assumption the code makes of a row (a quantity below 1 let every
// claimant win); each must be refused by a CHECK of Schema. With the
// quantity's CHECK dropped (a database created before it existed), the
// edit lands and the code refuses it instead: Settle records nothing and
// Audit does not replay a snapshot that records it.
func TestSchemaRefusesCorruptRows(t *testing.T) {
	reproduce := "; reproduce: go test ./ref/loot/mysql -run " + t.Name()
	dsn := testserver.MariaDB(t)
	clock := newTestClock(t, dsn)
	st := open(t, dsn)
	db, ctx := st.DB(), t.Context()
	svc, err := loot.New(loot.Config{Store: st, Inventory: st.Inventory(), Fairness: memory.NewHistory()})
	if err != nil {
		t.Fatal(err)
	}
	members := []loot.PlayerID{1001, 1002, 1003}
	for _, no := range []string{"CORRUPT", "AUDITED"} {
		if _, err := svc.Open(ctx, loot.Spec{No: no, Dungeon: "ABYSS-3", Loot: "RING-7", Quantity: 3,
			Deadline: clock.now(t).Add(time.Minute), Rule: loot.RuleCount, Members: members}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.StartClaiming(ctx, no); err != nil {
			t.Fatal(err)
		}
		for _, p := range members {
			if _, err := svc.Claim(ctx, loot.Caller{Player: p}, loot.ClaimRequest{Session: no, Intent: loot.Need}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clock.advance(t, time.Minute)
	if _, err := svc.Settle(ctx, "AUDITED"); err != nil {
		t.Fatalf("Settle(AUDITED): %v%s", err, reproduce)
	}
	for _, edit := range []string{
		"UPDATE loot_session SET total_quantity = -1 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET total_quantity = 0 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET allocated_quantity = 4 WHERE session_no = 'AUDITED'",
		"UPDATE loot_session SET allocated_quantity = -1 WHERE session_no = 'AUDITED'",
		"UPDATE loot_session SET status = 'DONE' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET status = 'SETTLING', settle_until = NULL WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET fence = -1 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET session_no = '' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET loot_code = REPEAT('é', 33) WHERE session_no = 'CORRUPT'",
		"UPDATE loot_member SET player_id = 0 WHERE session_no = 'CORRUPT' AND player_id = 1001",
		"UPDATE loot_member_list SET players = '0,1002,1003' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_member_list SET players = '' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_intent SET intent_type = 'ROLL' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_intent SET priority = 99 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_intent SET player_id = -5 WHERE session_no = 'CORRUPT' AND player_id = 1001",
		"UPDATE loot_intent SET requests = 0 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_grant SET quantity = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET grant_rank = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET status = 'LOST' WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET retry_count = -1 WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET player_id = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_audit SET fence = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_audit SET members = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_inventory SET quantity = 0",
		"UPDATE loot_inventory SET player_id = 0",
	} {
		res, err := db.ExecContext(ctx, edit)
		switch {
		case err == nil:
			n, _ := res.RowsAffected()
			t.Errorf("%s: accepted (%d rows), want a CHECK to refuse it%s", edit, n, reproduce)
		case !strings.Contains(err.Error(), "CONSTRAINT"):
			t.Errorf("%s: %v, want a CHECK constraint's refusal%s", edit, err, reproduce)
		case !errors.Is(mysql.Wrap("edit", err), loot.ErrBadArgument):
			// Should a store write ever hit a CHECK, the client is told
			// its request is refused, not to repeat it.
			t.Errorf("%s: the store classifies the CHECK's refusal (%v) as not ErrBadArgument%s", edit, err, reproduce)
		}
	}

	// A database whose table predates the CHECK: the edit lands, and the
	// code is the defence.
	if _, err := db.ExecContext(ctx, "ALTER TABLE loot_session DROP CONSTRAINT ck_session_quantity, DROP CONSTRAINT ck_session_allocated"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE loot_session SET total_quantity = -1 WHERE session_no = 'CORRUPT'"); err != nil {
		t.Fatal(err)
	}
	if st, err := svc.Settle(ctx, "CORRUPT"); !errors.Is(err, loot.ErrBadArgument) {
		t.Errorf("Settle of a session row with quantity -1 = %d grants, %v; want ErrBadArgument%s", len(st.Grants), err, reproduce)
	}
	if gs, err := st.Grants(ctx, "CORRUPT"); err != nil || len(gs) != 0 {
		t.Errorf("grants of the corrupt session = %v, %v; want none%s", gs, err, reproduce)
	}
	if _, err := db.ExecContext(ctx, "UPDATE loot_audit SET snapshot = JSON_SET(snapshot, '$.Quantity', -1) WHERE session_no = 'AUDITED'"); err != nil {
		t.Fatal(err)
	}
	var re *loot.ReplayError
	if _, err := svc.Audit(ctx, "AUDITED"); !errors.As(err, &re) {
		t.Errorf("Audit of a snapshot recording quantity -1 = %v, want a *loot.ReplayError%s", err, reproduce)
	}
}
