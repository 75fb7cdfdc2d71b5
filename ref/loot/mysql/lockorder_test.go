package mysql_test

import (
	"database/sql"
	"errors"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// TestLockingInsertSelectLocksEveryRowItReads is the server behaviour
// loot_record_batch_v4 rests on (settlebatch.go): its first statement, an
// INSERT ... SELECT from JSON_TABLE(batch) STRAIGHT_JOIN loot_session ...
// FOR UPDATE, locks every session row it reads, the rows its WHERE keeps
// (so the sessions it writes audit rows for stay SETTLING at their fence
// until COMMIT) and the rows it does not (so two batches lock their common
// rows in the batch's order), under both isolation levels. A concurrent
// UPDATE of either row must wait: here, time out after a second.
func TestLockingInsertSelectLocksEveryRowItReads(t *testing.T) {
	const reproduce = "ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run 'TestLockingInsertSelectLocksEveryRowItReads' ./ref/loot/mysql/"
	defer func() {
		if t.Failed() {
			t.Log("to reproduce: " + reproduce)
		}
	}()
	ctx := t.Context()
	dsn := testserver.MariaDB(t)
	for _, iso := range isolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			db, err := sql.Open("mysql", dsn+iso.params)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			for _, q := range []string{
				"CREATE TABLE IF NOT EXISTS lk_session (no VARCHAR(8) PRIMARY KEY, status VARCHAR(8) NOT NULL) ENGINE = InnoDB",
				"CREATE TABLE IF NOT EXISTS lk_audit (no VARCHAR(8) PRIMARY KEY) ENGINE = InnoDB",
				"DELETE FROM lk_audit",
				"DELETE FROM lk_session",
				"INSERT INTO lk_session VALUES ('a', 'SETTLING'), ('b', 'CLOSED')",
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(q, ": ", err)
				}
			}
			writer, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer writer.Close()
			other, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := other.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"START TRANSACTION", `INSERT INTO lk_audit SELECT s.no
				FROM JSON_TABLE('[["a"],["b"]]', '$[*]' COLUMNS (no VARCHAR(8) PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR)) j
				STRAIGHT_JOIN lk_session s ON s.no = j.no
				WHERE s.status = 'SETTLING'
				FOR UPDATE`} {
				if _, err := writer.ExecContext(ctx, q); err != nil {
					t.Fatal(q, ": ", err)
				}
			}
			for _, row := range []string{"a", "b"} {
				_, err := other.ExecContext(ctx, "UPDATE lk_session SET status = 'X' WHERE no = ?", row)
				if !isLockWaitTimeout(err) {
					t.Errorf("UPDATE of row %q during the locking INSERT ... SELECT's transaction: %v; want it to wait for the lock (error 1205)", row, err)
				}
			}
			if _, err := writer.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// isLockWaitTimeout reports whether err is MariaDB's error 1205, lock wait
// timeout exceeded.
func isLockWaitTimeout(err error) bool {
	var me *gomysql.MySQLError
	return errors.As(err, &me) && me.Number == 1205
}
