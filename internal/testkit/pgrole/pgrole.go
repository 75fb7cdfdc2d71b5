// Package pgrole makes the least-privilege application role the
// PostgreSQL stores' tests open their stores as.
package pgrole

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// App creates, on the database of url (a testserver URL, as the admin
// "postgres"), a login role without CREATE on the schema public, runs
// stmts as the admin with {role} standing for the role's name (the schema
// a DBA creates, the grants), and returns url as that role.
func App(t *testing.T, url string, stmts ...string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	role := "app_" + strings.TrimPrefix(conn.Config().Database, "t")
	setup := []string{
		"CREATE ROLE {role} LOGIN",
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC", // already so since PostgreSQL 15
	}
	for _, stmt := range append(setup, stmts...) {
		if _, err := conn.Exec(t.Context(), strings.ReplaceAll(stmt, "{role}", role)); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return strings.Replace(url, "postgres://postgres@", "postgres://"+role+"@", 1)
}
