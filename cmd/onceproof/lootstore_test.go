package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/impls/loot/seedverbatim"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootprops "github.com/onceproof/onceproof/props/loot"
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
func runLootStoreMatrix(t *testing.T, store string, args ...string) lootprops.Matrix {
	t.Helper()
	return runStoreMatrixOf[lootprops.Matrix](t, "loot-ref", append([]string{"-subject", "loot", "-store", store, "-families", lootStoreFamilies, "-n", lootStoreN}, args...)...)
}

// sameCellsAsInMemory checks that m's only row has loot-ref's cells in
// memory under the same families, schedules and seed (sameCells): any
// difference is the database store breaking ref/loot's contract.
func sameCellsAsInMemory(t *testing.T, m lootprops.Matrix, d lootfaults.Design, row string) {
	t.Helper()
	mem := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{d}, Families: familiesOf(lootStoreFamilies), N: m.N, Seed: m.Seed})
	sameCells(t, m, mem, row, d.Name()+" in memory")
}

// TestSeedVerbatimOnMariaDBMatchesMemory: the document's own SQL on a
// real MariaDB fails the properties its in-memory model fails, cell for
// cell. Not run for run: selectRanked's ORDER BY has no final key, so a
// tie's order is the database's choice (row order in memory; on MariaDB
// 10.11 often the unique key's player order), and one schedule can fail
// RuleOrder on one and Replayable on the other; the cells' verdicts agree.
func TestSeedVerbatimOnMariaDBMatchesMemory(t *testing.T) {
	url := lootMySQLURL(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "matrix.json")
	args := []string{"matrix", "-subject", "loot", "-store", url, "-designs", "loot-seed-verbatim", "-families", lootStoreFamilies + ",ties", "-n", lootStoreN, "-out", dir, "-json", js}
	code, stdout, stderr := runCLI(args...)
	// It fails (exit 1) where the document's design fails: the cells say
	// whether that is where it fails in memory.
	if code != exitOK && code != exitFailed {
		t.Fatalf("onceproof %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	var m lootprops.Matrix
	b, err := os.ReadFile(js)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	mem := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{seedverbatim.Design{}}, Families: familiesOf(lootStoreFamilies + ",ties"), N: m.N, Seed: m.Seed})
	sameVerdicts(t, m, mem, "loot-seed-verbatim@mysql", "loot-seed-verbatim in memory", false)
	// Nothing undeclared (a declared failure may not show in 4 runs a
	// cell: the declarations are derived for the default budget).
	for _, x := range m.Mismatches() {
		if slices.ContainsFunc(x.Got, func(p engine.Property) bool { return !slices.Contains(x.Want, p) }) || x.Unknown > 0 {
			t.Errorf("loot-seed-verbatim@mysql: %v\nreproduce: go run ./cmd/onceproof %s", x, strings.Join(args[:len(args)-4], " "))
		}
	}
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
	sameCellsAsInMemory(t, m, lootref.Design{}, "loot-ref@postgres")
	if n := pgCount(t, url, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'onceproof_loot_%'"); n != 0 {
		t.Errorf("matrix -subject loot -store postgres left %d onceproof_loot_* schemas (every run's schema must be dropped)", n)
	}
}

func TestLootMatrixOnMariaDBMatchesMemoryAndDropsItsDatabases(t *testing.T) {
	url := lootMySQLURL(t)
	m := runLootStoreMatrix(t, url, "-designs", "loot-ref")
	sameCellsAsInMemory(t, m, lootref.Design{}, "loot-ref@mysql")
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
// database, not from a memory store beside it. Given a clock a year past
// the world's (the database's only view of time), every deadline has
// passed by it: opens are refused before their deadline, and the matrix
// must show it.
func TestLootStoreRowIsJudgedOnTheDatabase(t *testing.T) {
	url := testserver.Postgres(t)
	open := postgresLootSlots(url, "teeth")
	d := lootref.OnSlots(lootref.Design{}, lootref.Where{DB: "postgres-a-year-late"}, func(ctx context.Context, k int) (*lootref.Slot, error) {
		s, err := open(ctx, k)
		if err == nil {
			onTime := s.Cluster
			s.Cluster = func(lootfaults.Clock) lootfaults.Cluster { return onTime(yearLate{}) }
		}
		return s, err
	})
	defer func() {
		if err := d.Done(); err != nil {
			t.Error(err)
		}
	}()
	m := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{d}, Families: []engine.Family{lootfaults.Families.Clean}, N: 8})
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if c := m.Rows[0].Cells[0]; !slices.Contains(c.Failed, lootfaults.Properties.HonestAnswer) {
		t.Errorf("loot-ref on a database a year late fails %v under clean, want HonestAnswer (its opens refused): the row is not judged on its database", c.Failed)
	}
	if d.Live() != 0 {
		t.Errorf("%d runs' slots never closed", d.Live())
	}
}

// yearLate is a database clock a year past the world's epoch.
type yearLate struct{}

func (yearLate) Now() time.Time { return engine.Epoch.AddDate(1, 0, 0) }

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
		{[]string{"-store", "postgres://u@127.0.0.1:1/x", "-designs", "loot-seed-verbatim"}, exitBadUse, "on a mysql:// database only"},
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
