package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// A store of the wrong kind at the address, a role without privilege: the
// one line names the cause, not the driver's wrapping.
func TestStoreErrorsNameTheirRootCause(t *testing.T) {
	pg := testserver.PostgresServer(t)
	rd := testserver.Redis(t)
	dbURL := testserver.Postgres(t)

	// A role that may connect but not create tables: PostgreSQL 15 grants
	// no CREATE on schema public to other roles.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Roles are the server's, not the database's: named after this test's
	// fresh database, so a second run (-count 2) makes its own.
	u, _ := url.Parse(dbURL)
	role := "limited_" + strings.TrimPrefix(u.Path, "/")
	role = role[:min(len(role), 63)] // PostgreSQL truncates identifiers past 63 bytes (NAMEDATALEN-1)
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN", role)); err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	limited := u.String()

	for _, tc := range []struct {
		name, store, want string
	}{
		{"redis-url-at-postgres", "redis://" + fmt.Sprintf("127.0.0.1:%d", pg.Port) + "/0", "wrong protocol"},
		{"postgres-url-at-redis", "postgres://app@" + rd.Addr + "/x", "no answer in time"},
		{"no-privilege", limited, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"matrix", "-store", tc.store, "-n", "1", "-families", "clean", "-out", t.TempDir()}
			code, _, errs := runCLI(args...)
			if code != exitFailed || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "CREATE TABLE") {
				t.Errorf("onceproof %s: exit %d, stderr %q; want exit 1 and one line naming %q", strings.Join(args, " "), code, errs, tc.want)
			}
		})
	}
}

// A Redis that may lose acknowledged writes on a crash is refused, with the
// flag that accepts it named; with the flag, the matrix runs.
func TestWeakRedisIsRefusedUnlessAllowed(t *testing.T) {
	srv := testserver.StartRedis(t, "--appendonly", "no")
	args := []string{"matrix", "-store", srv.URL(), "-n", "1", "-families", "clean", "-out", t.TempDir()}
	code, _, errs := runCLI(args...)
	if code != exitFailed || !strings.Contains(errs, "does not persist every write") || !strings.Contains(errs, "-allow-weak-durability") || strings.Count(errs, "\n") != 1 {
		t.Errorf("onceproof %s: exit %d, stderr %q; want exit 1 naming the durability and the flag", strings.Join(args, " "), code, errs)
	}
	args = append(args, "-allow-weak-durability")
	if code, out, errs := runCLI(args...); code != exitOK {
		t.Errorf("onceproof %s: exit %d, want 0\n%s%s", strings.Join(args, " "), code, out, errs)
	}
}

// pgx wraps the server's refusal in the attempts it made (TLS first, then
// plain, one line per address): the line still starts with the cause.
func TestRootCauseLooksUnderTheDriversLayers(t *testing.T) {
	auth := &pgconn.PgError{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "app"`}
	err := fmt.Errorf("postgres: open: failed to connect to `user=app database=game`:\n\t127.0.0.1:5432 (127.0.0.1): tls error: server refused TLS connection\n\t127.0.0.1:5432 (127.0.0.1): %w", auth)
	sp := storeSpec{kind: "postgres", target: "postgres://app:s3cret@127.0.0.1:5432/game"}
	got := storeError(err, sp, false)
	if want := `authentication failed: password authentication failed for user "app"`; !strings.HasPrefix(got, want) || strings.Contains(got, "\n") {
		t.Errorf("storeError = %q, want one line starting %q", got, want)
	}
	if v := storeError(fmt.Errorf("%w (dsn %s)", err, sp.target), sp, true); strings.Contains(v, "s3cret") || !strings.Contains(v, "tls error") {
		t.Errorf("verbose storeError = %q, want the whole chain with the password masked", v)
	}
}
