package testserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestPostgresGivesEachTestItsOwnDatabase(t *testing.T) {
	a, b := Postgres(t), Postgres(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s; reproduce: go test ./internal/testkit/testserver -run %s", a, t.Name())
	}
	ctx := context.Background()
	for _, url := range []string{a, b} {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatalf("connect %s: %v; reproduce: go test ./internal/testkit/testserver -run %s", url, err, t.Name())
		}
		var db string
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE x (k int PRIMARY KEY)"); err != nil {
			t.Fatalf("create table in %s: %v (a table leaked from the other database?)", db, err)
		}
		conn.Close(ctx)
	}
}

// TestMariaDBGivesEachTestItsOwnDatabase: two databases are distinct and
// usable, and the server listens on loopback only, as an unprivileged user
// when the tests run as root.
func TestMariaDBGivesEachTestItsOwnDatabase(t *testing.T) {
	reproduce := "; reproduce: go test ./internal/testkit/testserver -run " + t.Name()
	a, b := MariaDB(t), MariaDB(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s%s", a, reproduce)
	}
	for _, dsn := range []string{a, b} {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var name, bind string
		var networkingOff bool
		if err := db.QueryRow("SELECT DATABASE(), @@bind_address, @@skip_networking").Scan(&name, &bind, &networkingOff); err != nil {
			t.Fatalf("query %s: %v%s", dsn, err, reproduce)
		}
		if bind != "127.0.0.1" || networkingOff {
			t.Errorf("server binds %q (skip_networking %v), want 127.0.0.1 over TCP%s", bind, networkingOff, reproduce)
		}
		if _, err := db.Exec("CREATE TABLE x (k INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
			t.Fatalf("create table in %s: %v (a table leaked from the other database?)%s", name, err, reproduce)
		}
		if _, err := db.Exec("INSERT INTO x VALUES (1)"); err != nil {
			t.Fatalf("insert into %s.x: %v%s", name, err, reproduce)
		}
	}
	if os.Geteuid() == 0 {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", MariaDBServer(t).proc.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == "0" {
				t.Errorf("mariadbd runs as root%s", reproduce)
			}
		}
	}
}

func TestRedisAnswersOnLoopback(t *testing.T) {
	s := Redis(t)
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("redis listens on %q, want 127.0.0.1; reproduce: go test ./internal/testkit/testserver -run %s", s.Addr, t.Name())
	}
	if err := ping(s.Addr); err != nil {
		t.Fatalf("ping %s: %v; reproduce: go test ./internal/testkit/testserver -run %s", s.Addr, err, t.Name())
	}
	if p1, p2 := RedisPrefix(t), RedisPrefix(t); p1 == p2 {
		t.Fatalf("two prefixes are equal: %q", p1)
	}
}

func TestStartRedisRestartKeepsAppendOnlyData(t *testing.T) {
	s := StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	send := func(cmd string) string {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	if got := send("SET k v"); got != "+OK\r\n" {
		t.Fatalf("SET answered %q", got)
	}
	s.Restart(t)
	if got := send("GET k"); got != "$1\r\nv\r\n" {
		t.Fatalf("after restart GET k = %q, want v; reproduce: go test ./internal/testkit/testserver -run %s", got, t.Name())
	}
}

// recorder captures what unavailable does instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestMissingServerSkipsWithInstallHintOrFailsUnderRequire(t *testing.T) {
	missing := errors.New("postgres not found")
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	unavailable(r, "postgresql", missing)
	if r.failed != "" || !strings.Contains(r.skipped, installHint) || !strings.Contains(installHint, "mariadb-server") || strings.Contains(r.skipped, "\n") {
		t.Fatalf("without %s: skipped %q failed %q; want one skip line naming the Debian packages; reproduce: go test ./internal/testkit/testserver -run %s",
			RequireEnv, r.skipped, r.failed, t.Name())
	}
	t.Setenv(RequireEnv, "1")
	r = &recorder{TB: t}
	unavailable(r, "postgresql", missing)
	if r.skipped != "" || !strings.Contains(r.failed, "postgres not found") {
		t.Fatalf("with %s=1: skipped %q failed %q; want a failure naming the cause; reproduce: go test ./internal/testkit/testserver -run %s",
			RequireEnv, r.skipped, r.failed, t.Name())
	}
}
