package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/lootprops"
	"github.com/onceproof/onceproof/lootworld"
)

// lootStoreFamilies are the loot families a real-database test runs: no
// faults; the three that hit the store (a crash at each fault point, a
// failing call, a call whose success is lost); the claims racing the
// deadline, which the store's clock judges; and settles interleaved on
// every node, where the store's one conditional write decides.
const lootStoreFamilies = "clean,crash,store-error,timeout-after-success,late-claim,concurrent-settle"

// lootStoreN is -n for these tests: 4 runs per cell (2 do not always
// reach a failing or timed-out call, which fails a cell as not exercised),
// 120 under concurrent-settle (lootprops.DeepN), 140 runs: a few seconds.
const lootStoreN = "8"

// runLootStoreMatrix runs `matrix -subject loot -store store` and returns
// the matrix it wrote as JSON; it fails the test unless the run exits 0
// (loot-ref holds).
func runLootStoreMatrix(t *testing.T, store string) lootprops.Matrix {
	t.Helper()
	return runStoreMatrixOf[lootprops.Matrix](t, "loot-ref", "-subject", "loot", "-store", store, "-families", lootStoreFamilies, "-n", lootStoreN)
}

// sameCellsAsInMemory checks that m's only row has loot-ref's cells in
// memory under the same families, schedules and seed (sameCells): any
// difference is the database store breaking ref/loot's contract.
func sameCellsAsInMemory(t *testing.T, m lootprops.Matrix, row string) {
	t.Helper()
	mem := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootworld.Design{lootref.Design{}}, Families: familiesOf(lootStoreFamilies), N: m.N, Seed: m.Seed})
	sameCells(t, m, mem, row, "loot-ref in memory")
}

// lootMySQLURL is a mysql:// URL of a fresh database on the test server.
func lootMySQLURL(t *testing.T) string {
	t.Helper()
	cfg, err := gomysql.ParseDSN(testserver.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("mysql://%s@%s/%s", cfg.User, cfg.Addr, cfg.DBName)
}

func TestLootMatrixOnPostgresMatchesMemoryAndDropsItsSchemas(t *testing.T) {
	url := testserver.Postgres(t)
	m := runLootStoreMatrix(t, url)
	sameCellsAsInMemory(t, m, "loot-ref@postgres")
	if n := pgCount(t, url, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'onceproof_loot_%'"); n != 0 {
		t.Errorf("matrix -subject loot -store postgres left %d onceproof_loot_* schemas (every run's schema must be dropped)", n)
	}
}

func TestLootMatrixOnMariaDBMatchesMemoryAndDropsItsDatabases(t *testing.T) {
	url := lootMySQLURL(t)
	m := runLootStoreMatrix(t, url)
	sameCellsAsInMemory(t, m, "loot-ref@mysql")
	srv := testserver.MariaDBServer(t)
	db, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'onceproof_loot_%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("matrix -subject loot -store mysql left %d onceproof_loot_* databases (every run's database must be dropped)", n)
	}
}

// TestLootStoreRowIsJudgedOnTheDatabase: the row's verdicts come from the
// database, not from a memory store beside it. With the clock sync taken
// out, the store's "now" stands at the slot's creation (the wall clock,
// months past the world's epoch), so every deadline has passed by it: a
// settle before the deadline is let through, claims are refused, and the
// matrix must show it.
func TestLootStoreRowIsJudgedOnTheDatabase(t *testing.T) {
	url := testserver.Postgres(t)
	open := postgresLootSlots(url, "teeth")
	d := &LootStoreDesign{name: "loot-ref@postgres-frozen-clock", open: func(ctx context.Context, k int) (*lootSlot, error) {
		s, err := open(ctx, k)
		if err == nil {
			s.setClock = func(context.Context, time.Time) error { return nil }
		}
		return s, err
	}}
	defer func() {
		if err := d.Done(); err != nil {
			t.Error(err)
		}
	}()
	m := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootworld.Design{d}, Families: []engine.Family{lootworld.Clean, lootworld.EarlySettle}, N: 8})
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if len(m.Mismatches()) == 0 {
		t.Errorf("loot-ref on a database whose clock never moves holds under clean and early-settle: the row is not judged on its database")
	}
	if d.Live() != 0 {
		t.Errorf("%d runs' slots never closed", d.Live())
	}
}

func TestLootMatrixStoreBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-store", "sqlite:" + t.TempDir()}, exitBadUse, "is not a loot database"},
		{[]string{"-store", "redis://127.0.0.1:6379/0"}, exitBadUse, "want postgres://"},
		{[]string{"-store", "mysql://u:secret@db.example/"}, exitBadUse, "names no database"},
		{[]string{"-store", "postgres://u@127.0.0.1:1/x", "-designs", "lock-only"}, exitBadUse, "runs only the loot-ref design"},
		// Port 1 on loopback refuses at once: the probe fails before the
		// matrix starts, and the password is not printed.
		{[]string{"-store", "mysql://u:secret@127.0.0.1:1/x"}, exitFailed, "cannot use -store mysql://u:xxxxx@127.0.0.1:1/x"},
		{[]string{"-store", "postgres://u:secret@127.0.0.1:1/x?connect_timeout=5"}, exitFailed, "cannot use -store postgres://u:xxxxx@127.0.0.1:1/x"},
	} {
		args := append([]string{"matrix", "-subject", "loot", "-families", "clean", "-n", "2", "-out", t.TempDir()}, tc.args...)
		code, _, errs := runCLI(args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Contains(errs, "secret") {
			t.Errorf("onceproof %s: exit %d, stderr %q; want exit %d and %q (password redacted)\nreproduce: go run ./cmd/onceproof %s",
				strings.Join(args, " "), code, errs, tc.code, tc.want, strings.Join(args, " "))
		}
	}
}
