package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestSchemaRefusesCorruptRows: every hand edit below breaks an
// assumption the code makes of a row (a quantity below 1 let every
// claimant win); each must be refused by a CHECK of Schema, as
// mysql.Schema refuses the same edits. With the quantity's CHECKs dropped
// (a database created before they existed), the edit lands and the code
// refuses it instead: Settle records nothing and Audit does not replay a
// snapshot that records it.
func TestSchemaRefusesCorruptRows(t *testing.T) {
	reproduce := "; reproduce: go test ./ref/loot/postgres -run " + t.Name()
	url, pool := clockedDB(t, clockBase)
	st := openStore(t, url, postgres.Options{TestClock: testClock})
	defer st.Close()
	ctx := t.Context()
	svc, err := loot.New(loot.Config{Store: st, Inventory: st.Inventory(nil), Fairness: memory.NewHistory()})
	if err != nil {
		t.Fatal(err)
	}
	members := []loot.PlayerID{1001, 1002, 1003}
	for _, no := range []string{"CORRUPT", "AUDITED"} {
		if _, err := svc.Open(ctx, loot.Spec{No: no, Dungeon: "ABYSS-3", Loot: "RING-7", Quantity: 3,
			Deadline: clockBase.Add(time.Minute), Rule: loot.RuleCount, Members: members}); err != nil {
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
	if _, err := pool.Exec(ctx, `UPDATE `+testClock+` SET now = now + interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Settle(ctx, "AUDITED"); err != nil {
		t.Fatalf("Settle(AUDITED): %v%s", err, reproduce)
	}
	for _, edit := range []string{
		"UPDATE loot_session SET quantity = -1 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET quantity = 0 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET allocated = 4 WHERE session_no = 'AUDITED'",
		"UPDATE loot_session SET allocated = -1 WHERE session_no = 'AUDITED'",
		"UPDATE loot_session SET status = 'DONE' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET status = 'SETTLING', settle_until = NULL WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET fence = -1 WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET rule_version = '' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_session SET loot_code = repeat('é', 33) WHERE session_no = 'CORRUPT'",
		"UPDATE loot_member SET player_id = 0 WHERE session_no = 'CORRUPT' AND player_id = 1001",
		"UPDATE loot_claim SET intent = 'ROLL' WHERE session_no = 'CORRUPT'",
		"UPDATE loot_claim SET player_id = -5 WHERE session_no = 'CORRUPT' AND player_id = 1001",
		"UPDATE loot_grant SET quantity = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET rank = 0 WHERE session_no = 'AUDITED' AND rank = 1",
		"UPDATE loot_grant SET status = 'LOST' WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET attempts = -1 WHERE session_no = 'AUDITED'",
		"UPDATE loot_grant SET player_id = 0 WHERE session_no = 'AUDITED' AND rank = 1",
		"UPDATE loot_snapshot SET fence = 0 WHERE session_no = 'AUDITED'",
		"UPDATE loot_snapshot SET quantity = -1 WHERE session_no = 'AUDITED'",
		"UPDATE loot_inventory SET quantity = 0",
		"UPDATE loot_inventory SET player_id = 0",
	} {
		tag, err := pool.Exec(ctx, edit)
		if err == nil {
			t.Errorf("%s: accepted (%d rows), want a CHECK to refuse it%s", edit, tag.RowsAffected(), reproduce)
		} else if !strings.Contains(err.Error(), "check constraint") {
			t.Errorf("%s: %v, want a CHECK constraint's refusal%s", edit, err, reproduce)
		}
	}

	// A database whose tables predate the CHECKs: the edits land, and the
	// code is the defence.
	for _, stmt := range []string{
		"ALTER TABLE loot_session DROP CONSTRAINT loot_session_quantity_check, DROP CONSTRAINT loot_session_allocated_le_quantity",
		"UPDATE loot_session SET quantity = -1 WHERE session_no = 'CORRUPT'",
		"ALTER TABLE loot_snapshot DROP CONSTRAINT loot_snapshot_quantity_check",
		"UPDATE loot_snapshot SET quantity = -1 WHERE session_no = 'AUDITED'",
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if st, err := svc.Settle(ctx, "CORRUPT"); !errors.Is(err, loot.ErrBadArgument) {
		t.Errorf("Settle of a session row with quantity -1 = %d grants, %v; want ErrBadArgument%s", len(st.Grants), err, reproduce)
	}
	if gs, err := st.Grants(ctx, "CORRUPT"); err != nil || len(gs) != 0 {
		t.Errorf("grants of the corrupt session = %v, %v; want none%s", gs, err, reproduce)
	}
	var re *loot.ReplayError
	if _, err := svc.Audit(ctx, "AUDITED"); !errors.As(err, &re) {
		t.Errorf("Audit of a snapshot recording quantity -1 = %v, want a *loot.ReplayError%s", err, reproduce)
	}
}
