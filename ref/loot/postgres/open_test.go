package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/internal/testkit/pgrole"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// tables are Schema's tables, which the application role is granted.
const tables = "loot_session, loot_member, loot_claim, loot_grant, loot_snapshot, loot_inventory"

// TestApplicationRoleNeedsOnlySelectInsertUpdate: a DBA runs Schema and
// grants SELECT, INSERT and UPDATE; the application role opens the store
// and takes a session from Open to delivered grants and Recover, and the
// role really has no DELETE, DROP or CREATE (the source document's 8.5).
func TestApplicationRoleNeedsOnlySelectInsertUpdate(t *testing.T) {
	admin := testserver.Postgres(t)
	url := pgrole.App(t, admin, postgres.Schema, "GRANT SELECT, INSERT, UPDATE ON "+tables+" TO {role}")
	st, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open as a role with SELECT, INSERT, UPDATE on tables made from Schema = %v", err)
	}
	defer st.Close()
	for _, stmt := range []string{"DELETE FROM loot_grant", "DROP TABLE loot_claim", "CREATE TABLE x (a int)", "TRUNCATE loot_session"} {
		if _, err := st.Pool().Exec(t.Context(), stmt); err == nil || !strings.Contains(err.Error(), "42501") {
			t.Errorf("%s as the application role = %v, want permission denied (42501)", stmt, err)
		}
	}
	svc, err := loot.New(loot.Config{Store: st, Inventory: st.Inventory(nil), Fairness: memory.NewHistory(), SettleLease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := svc.Open(ctx, loot.Spec{No: "S-1", Dungeon: "D", Loot: "RING-7", Quantity: 2, Deadline: time.Now().Add(time.Hour),
		Rule: loot.RuleSeeded, Members: []loot.PlayerID{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StartClaiming(ctx, "S-1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []loot.PlayerID{1, 2, 3} {
		if _, err := svc.Claim(ctx, loot.Caller{Player: p}, loot.ClaimRequest{Session: "S-1", Intent: loot.Need}); err != nil {
			t.Fatal(err)
		}
	}
	// The deadline comes in once the claims are in (a stall of the shared
	// machine cannot close claiming early): as if opened with it.
	if _, err := st.Pool().Exec(ctx, `UPDATE loot_session SET deadline_at = now() + interval '100 milliseconds' WHERE session_no = 'S-1'`); err != nil {
		t.Fatal(err)
	}
	st1 := settleWhenDue(t, svc, "S-1")
	if st1.Delivered != 2 {
		t.Fatalf("Settle as the application role delivered %d, want 2", st1.Delivered)
	}
	if _, err := svc.Recover(ctx); err != nil {
		t.Fatalf("Recover as the application role: %v", err)
	}
	if _, err := svc.Audit(ctx, "S-1"); err != nil {
		t.Fatalf("Audit as the application role: %v", err)
	}
}

// settleWhenDue settles no, waiting (by the database's clock) for its
// deadline.
func settleWhenDue(t *testing.T, svc *loot.Service, no string) loot.Settlement {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		st, err := svc.Settle(t.Context(), no)
		if !errors.Is(err, loot.ErrNotDue) {
			if err != nil {
				t.Fatalf("Settle(%s): %v", no, err)
			}
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("Settle(%s) still not due after 10s", no)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOpenWithoutCreatePrivilegeNamesTheStep: a role that may not create
// the tables gets one line naming the step and the server's reason.
func TestOpenWithoutCreatePrivilegeNamesTheStep(t *testing.T) {
	url := pgrole.App(t, testserver.Postgres(t))
	_, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err == nil {
		t.Fatal("Open as a role without CREATE succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "creating table loot_session: ") || !strings.Contains(msg, "42501") ||
		strings.Contains(msg, "CREATE TABLE") || strings.Contains(msg, "\n") {
		t.Fatalf("Open as a role without CREATE = %q; want one line naming the step and SQLSTATE 42501, without the SQL", msg)
	}
}

// TestOpenRefusesATableWithOtherColumns: a loot_claim made by something
// else is refused with ErrSchema before anything is created on it.
func TestOpenRefusesATableWithOtherColumns(t *testing.T) {
	url := testserver.Postgres(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `CREATE TABLE loot_claim (session_no text, player text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), url, postgres.Options{}); !errors.Is(err, postgres.ErrSchema) || !strings.Contains(err.Error(), "loot_claim") {
		t.Fatalf("Open over a foreign loot_claim = %v, want ErrSchema naming loot_claim", err)
	}
}

// TestConcurrentOpenCreatesSchemaOnce: nodes starting at once do not fail
// on each other's CREATE TABLE.
func TestConcurrentOpenCreatesSchemaOnce(t *testing.T) {
	url := testserver.Postgres(t)
	errs := make(chan error, 6)
	for range cap(errs) {
		go func() {
			s, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Open: %v", err)
		}
	}
}

// TestProductionReadsTheDatabaseClock: without TestClock a session's
// OpenedAt is the database's clock (between two clock_timestamp() reads
// around the Open); with it, the table's value, however far from the
// database's. A store that read the node's clock, or the clock table in
// production, fails one of the two.
func TestProductionReadsTheDatabaseClock(t *testing.T) {
	past := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
	url, pool := clockedDB(t, past)
	dbNow := func() time.Time {
		var now time.Time
		if err := pool.QueryRow(t.Context(), `SELECT clock_timestamp()`).Scan(&now); err != nil {
			t.Fatal(err)
		}
		return now
	}
	spec := func(no string, deadline time.Time) loot.Spec {
		return loot.Spec{No: no, Dungeon: "D", Loot: "L", Quantity: 1, Deadline: deadline, Rule: loot.RuleCount, Members: []loot.PlayerID{1}}
	}
	prod := openStore(t, url, postgres.Options{})
	defer prod.Close()
	before := dbNow()
	sess, _, err := prod.Open(t.Context(), spec("P", before.Add(time.Hour)))
	after := dbNow()
	if err != nil {
		t.Fatal(err)
	}
	if sess.OpenedAt.Before(loot.StoreTime(before)) || sess.OpenedAt.After(after) {
		t.Errorf("production OpenedAt %v, want the database's clock, between %v and %v", sess.OpenedAt, before, after)
	}
	clocked := openStore(t, url, postgres.Options{TestClock: testClock})
	defer clocked.Close()
	sess, _, err = clocked.Open(t.Context(), spec("T", past.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if !sess.OpenedAt.Equal(loot.StoreTime(past)) {
		t.Errorf("OpenedAt under TestClock %v, want the clock table's %v", sess.OpenedAt, past)
	}
}

// TestOpenRejectsABadTestClock: a name that is not an identifier, or a
// clock table without exactly one row, is ErrBadOptions.
func TestOpenRejectsABadTestClock(t *testing.T) {
	url, pool := clockedDB(t, clockBase)
	if _, err := postgres.Open(t.Context(), url, postgres.Options{TestClock: "c; DROP TABLE x"}); !errors.Is(err, postgres.ErrBadOptions) {
		t.Errorf("Open with TestClock %q = %v, want ErrBadOptions", "c; DROP TABLE x", err)
	}
	if _, err := pool.Exec(t.Context(), `INSERT INTO `+testClock+` VALUES (now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), url, postgres.Options{TestClock: testClock}); !errors.Is(err, postgres.ErrBadOptions) {
		t.Errorf("Open with a two-row clock table = %v, want ErrBadOptions", err)
	}
}
