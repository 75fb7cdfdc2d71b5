package mysql_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// base is the test clock's origin: an arbitrary instant with
// sub-microsecond digits, which the store must truncate.
var base = time.Date(2026, 3, 1, 12, 0, 0, 789, time.UTC)

// clockTable is the test clock the stores under test read instead of
// NOW(6) (Options.ClockTable).
const clockTable = "loot_test_clock"

// testClock is the harness's clock: a Go time moved only by advance, and
// the row the store reads, set to it (at microseconds) before advance
// returns.
type testClock struct {
	db *sql.DB
	mu sync.Mutex
	t  time.Time
}

func newTestClock(t *testing.T, dsn string) *testClock {
	t.Helper()
	db, err := sql.Open("mysql", dsn+"?parseTime=true&loc=UTC")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &testClock{db: db, t: base}
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+clockTable+" (id TINYINT PRIMARY KEY, at DATETIME(6) NOT NULL) ENGINE = InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), "INSERT INTO "+clockTable+" VALUES (1, ?)", loot.StoreTime(base)); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *testClock) now(*testing.T) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(t *testing.T, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	if _, err := c.db.ExecContext(t.Context(), "UPDATE "+clockTable+" SET at = ?", loot.StoreTime(c.t)); err != nil {
		t.Fatalf("advancing the test clock: %v", err)
	}
}

// harness gives each subtest a new database on the shared server, a test
// clock in it, and handles opened (as root, or as the role login makes of
// the DSN) with params added to the DSN.
func harness(params string, login func(t *testing.T, dsn string) string) func(t *testing.T) loottest.Harness {
	return harnessOf(mysql.Options{}, params, login)
}

// harnessOf is harness with the stores under test opened with opts.
func harnessOf(opts mysql.Options, params string, login func(t *testing.T, dsn string) string) func(t *testing.T) loottest.Harness {
	return func(t *testing.T) loottest.Harness {
		root := testserver.MariaDB(t)
		clock := newTestClock(t, root)
		admin := open(t, root+params) // creates the schema
		dsn := root
		if login != nil {
			dsn = login(t, root)
		}
		return loottest.Harness{
			Open:      func(t *testing.T) loot.Store { return openOpts(t, dsn+params, opts) },
			Now:       clock.now,
			Advance:   clock.advance,
			Inventory: func(_ *testing.T, s loot.Store) loot.Inventory { return s.(*mysql.Store).Inventory() },
			Applied: func(t *testing.T, grantNo string) int {
				n, err := admin.Inventory().Applied(t.Context(), grantNo)
				if err != nil {
					t.Fatal(err)
				}
				return n
			},
		}
	}
}

// open opens a store on dsn reading the test clock; it closes with t.
func open(t *testing.T, dsn string) *mysql.Store {
	t.Helper()
	return openOpts(t, dsn, mysql.Options{})
}

// openOpts is open with opts (its ClockTable set to the test clock).
func openOpts(t *testing.T, dsn string, opts mysql.Options) *mysql.Store {
	t.Helper()
	opts.ClockTable = clockTable
	s, err := mysql.Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatalf("mysql.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// isolations are the levels the tests run the store under, as DSN
// parameters (MariaDB's tx_isolation; MySQL 8's is transaction_isolation).
var isolations = []struct{ name, params string }{
	{"repeatable-read", ""},
	{"read-committed", "?tx_isolation=%27READ-COMMITTED%27"},
}

// TestStoreConformance runs the loot Store suite under MariaDB's default
// isolation, REPEATABLE READ, with the same-database Inventory.
func TestStoreConformance(t *testing.T) {
	loottest.Run(t, harness("", nil))
}

// TestStoreConformanceReadCommitted runs it again with every connection
// at READ COMMITTED: the store's correctness rests on its locking reads
// and conditional writes, not on the isolation level.
func TestStoreConformanceReadCommitted(t *testing.T) {
	loottest.Run(t, harness(isolations[1].params, nil))
}

// TestStoreConformanceLeastPrivilege runs it with every handle connected
// as a role that has SELECT, INSERT, UPDATE and EXECUTE on the database
// and nothing else (the source document's application account, with
// EXECUTE for Schema's routines): the tables and routines exist, so Open
// creates nothing, and no method needs more.
func TestStoreConformanceLeastPrivilege(t *testing.T) {
	loottest.Run(t, harness("", func(t *testing.T, dsn string) string {
		return appRole(t, dsn, appPrivileges)
	}))
}

// appPrivileges are the application account's: Store's duty 1.
const appPrivileges = "SELECT, INSERT, UPDATE, EXECUTE"

// appRole creates a user with privileges on dsn's database only, and
// returns dsn as that user.
func appRole(t *testing.T, dsn, privileges string) string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name string
	if err := db.QueryRowContext(t.Context(), "SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	user := "app_" + strings.TrimPrefix(name, "t")
	if len(user) > 80 {
		user = user[:80]
	}
	for _, stmt := range []string{
		fmt.Sprintf("CREATE USER '%s'@'127.0.0.1'", user),
		fmt.Sprintf("GRANT %s ON `%s`.* TO '%s'@'127.0.0.1'", privileges, name, user),
	} {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return strings.Replace(dsn, "root@", user+"@", 1)
}

// TestSchemaDefinesTheRoutinesTheStoreCalls: Schema, run by the mariadb
// client as a DBA would, leaves exactly the routines the store calls, and
// a store opened after it as the application's role creates nothing and
// claims.
func TestSchemaDefinesTheRoutinesTheStoreCalls(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test ./ref/loot/mysql -run " + t.Name()
	root := testserver.MariaDB(t)
	cfg, err := gomysql.ParseDSN(root)
	if err != nil {
		t.Fatal(err)
	}
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Skip("no mariadb client")
	}
	host, port, _ := strings.Cut(cfg.Addr, ":")
	cmd := exec.CommandContext(t.Context(), client, "--no-defaults", "-h", host, "-P", port, "-u", cfg.User, cfg.DBName)
	cmd.Stdin = strings.NewReader(mysql.Schema)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadb < Schema: %v: %s%s", err, out, reproduce)
	}
	db, err := sql.Open("mysql", root)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names string
	if err := db.QueryRowContext(t.Context(), `SELECT GROUP_CONCAT(routine_name ORDER BY routine_name) FROM information_schema.routines
		WHERE routine_schema = DATABASE()`).Scan(&names); err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(mysql.RoutineNames, ","); names != want {
		t.Fatalf("routines after Schema: %s, want %s%s", names, want, reproduce)
	}
	s, err := mysql.Open(t.Context(), appRole(t, root, appPrivileges), mysql.Options{})
	if err != nil {
		t.Fatalf("Open as the application's role over Schema's objects: %v%s", err, reproduce)
	}
	defer s.Close()
	if _, _, err := s.Claim(t.Context(), "NO-SUCH-SESSION", 1, loot.Need); !errors.Is(err, loot.ErrNotFound) {
		t.Fatalf("Claim on a missing session = %v, want ErrNotFound%s", err, reproduce)
	}
}
