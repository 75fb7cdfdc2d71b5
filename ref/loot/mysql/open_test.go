package mysql_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestOpenWithoutCreatePrivilegeNamesTheStep: a role that may not create
// the tables gets one line naming the step and the server's reason, not
// the statement.
func TestOpenWithoutCreatePrivilegeNamesTheStep(t *testing.T) {
	dsn := appRole(t, testserver.MariaDB(t), "SELECT, INSERT, UPDATE")
	_, err := mysql.Open(t.Context(), dsn, mysql.Options{})
	if err == nil {
		t.Fatalf("Open as a role without CREATE succeeded; reproduce: go test ./ref/loot/mysql -run %s", t.Name())
	}
	msg := err.Error()
	if !strings.Contains(msg, "creating table loot_session: ") || !strings.Contains(msg, "1142") ||
		strings.Contains(msg, "CREATE TABLE") || strings.Contains(msg, "\n") {
		t.Fatalf("Open as a role without CREATE = %q; want one line naming the step and error 1142, without the SQL; reproduce: go test ./ref/loot/mysql -run %s", msg, t.Name())
	}
}

// TestOpenRefusesForeignObjects: a table of Schema's name with other
// columns, or a routine of Schema's name (its version) whose body is not
// this version's, is ErrSchema, not silently used: a new routine body
// needs a new name, so nodes still calling the old one keep what they
// call.
func TestOpenRefusesForeignObjects(t *testing.T) {
	for name, foreign := range map[string]string{
		"table":   "CREATE TABLE loot_grant (grant_no VARCHAR(96) PRIMARY KEY, status INT)",
		"routine": "CREATE PROCEDURE loot_claim_v1(a TEXT, b BIGINT, c TEXT, d INT) BEGIN SELECT 1; END",
	} {
		t.Run(name, func(t *testing.T) {
			dsn := testserver.MariaDB(t)
			db, err := sql.Open("mysql", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(t.Context(), foreign); err != nil {
				t.Fatal(err)
			}
			if _, err := mysql.Open(t.Context(), dsn, mysql.Options{}); !errors.Is(err, mysql.ErrSchema) {
				t.Fatalf("Open over %q = %v, want ErrSchema; reproduce: go test ./ref/loot/mysql -run '%s'", foreign, err, t.Name())
			}
		})
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	dsn := testserver.MariaDB(t)
	for _, c := range []struct {
		dsn  string
		opts mysql.Options
	}{
		{"not a dsn", mysql.Options{}},
		{dsn, mysql.Options{ClockTable: "clock; DROP TABLE x"}},
	} {
		if _, err := mysql.Open(t.Context(), c.dsn, c.opts); !errors.Is(err, mysql.ErrBadOptions) {
			t.Errorf("Open(%q, %+v) = %v, want ErrBadOptions; reproduce: go test ./ref/loot/mysql -run %s", c.dsn, c.opts, err, t.Name())
		}
	}
}

// TestStoreUsesTheDatabaseClock: without Options.ClockTable the store
// judges by NOW(6) in UTC, whatever the server's time zone: a deadline a
// moment ahead of the database's clock refuses the settle, and once it
// passed the settle is due.
func TestStoreUsesTheDatabaseClock(t *testing.T) {
	s, err := mysql.Open(t.Context(), testserver.MariaDB(t)+"?time_zone=%27%2B08:00%27", mysql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var dbNow time.Time
	if err := s.DB().QueryRowContext(t.Context(), "SELECT NOW(6)").Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(dbNow); d < -time.Minute || d > time.Minute {
		t.Fatalf("NOW(6) on the store's connection reads %v, %v from this machine's UTC clock: the session is not in UTC; reproduce: go test ./ref/loot/mysql -run %s", dbNow, d, t.Name())
	}
	sess, _, err := s.Open(t.Context(), loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
		Deadline: dbNow.Add(2 * time.Second), Rule: loot.RuleCount, Members: []loot.PlayerID{1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartClaiming(t.Context(), sess.No); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginSettle(t.Context(), sess.No, time.Second); !errors.Is(err, loot.ErrNotDue) {
		t.Fatalf("BeginSettle before the deadline = %v, want ErrNotDue; reproduce: go test ./ref/loot/mysql -run %s", err, t.Name())
	}
	time.Sleep(time.Until(dbNow.Add(2*time.Second)) + 100*time.Millisecond)
	if _, err := s.BeginSettle(t.Context(), sess.No, time.Second); err != nil {
		t.Fatalf("BeginSettle after the deadline = %v; reproduce: go test ./ref/loot/mysql -run %s", err, t.Name())
	}
}

// TestOpenWithoutExecuteNamesTheRoutine: over tables and routines a DBA
// made from Schema, a role without EXECUTE (the document's SELECT,
// INSERT and UPDATE) cannot see the routines, and Open says which one it
// could not create, in one line; with EXECUTE added it opens and claims
// (TestStoreConformanceLeastPrivilege runs the whole suite so).
func TestOpenWithoutExecuteNamesTheRoutine(t *testing.T) {
	root := testserver.MariaDB(t)
	s, err := mysql.Open(t.Context(), root, mysql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = mysql.Open(t.Context(), appRole(t, root, "SELECT, INSERT, UPDATE"), mysql.Options{})
	if err == nil {
		t.Fatalf("Open as a role without EXECUTE succeeded; reproduce: go test ./ref/loot/mysql -run %s", t.Name())
	}
	if msg := err.Error(); !strings.Contains(msg, "creating routine loot_claim_v1: ") || strings.Contains(msg, "CREATE PROCEDURE") || strings.Contains(msg, "\n") {
		t.Fatalf("Open as a role without EXECUTE = %q; want one line naming the routine, without the SQL; reproduce: go test ./ref/loot/mysql -run %s", msg, t.Name())
	}
}
