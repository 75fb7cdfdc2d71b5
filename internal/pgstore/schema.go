// Package pgstore is what the PostgreSQL stores (ref/postgres,
// ref/loot/postgres) do alike when they open: the pool (pool.go) and the
// schema, of which they create only what is missing (this file).
package pgstore

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A schema is written as CREATE TABLE / CREATE INDEX ... IF NOT EXISTS
// statements, and a least-privilege role must still be able to open a
// store whose tables a DBA created: CREATE ... IF NOT EXISTS needs CREATE
// on the schema even when the object exists, so each object is looked up
// first and only a missing one is created.

// Step is one statement of a schema and what it does, for errors: a failed
// step is reported by its description, not by its SQL.
type Step struct {
	What   string // "creating table x"
	Object string // x, to look up before creating
	SQL    string
}

var createStmt = regexp.MustCompile(`^CREATE (TABLE|INDEX) IF NOT EXISTS (\w+)`)

// Steps splits schema into its statements. It panics on a statement that is
// not CREATE TABLE or CREATE INDEX ... IF NOT EXISTS (a programming error:
// schemas are constants).
func Steps(schema string) []Step {
	var steps []Step
	for _, stmt := range strings.SplitAfter(schema, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		m := createStmt.FindStringSubmatch(stmt)
		if m == nil {
			panic("pgstore: statement without CREATE TABLE|INDEX IF NOT EXISTS: " + stmt)
		}
		steps = append(steps, Step{What: "creating " + strings.ToLower(m[1]) + " " + m[2], Object: m[2], SQL: strings.TrimSuffix(stmt, ";")})
	}
	return steps
}

// Create runs, in one transaction under the advisory lock lockID (nodes
// starting at once would otherwise fail on the catalog's unique index),
// check and then every step whose object does not exist. check (nil: none)
// sees the schema before anything is created, so it can refuse a table
// that exists with other columns before an index on them fails obscurely.
// Errors name the step ("creating table x: ERROR: permission denied ..."),
// never its SQL.
func Create(ctx context.Context, pool *pgxpool.Pool, lockID int64, steps []Step, check func(context.Context, pgx.Tx) error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("starting the schema transaction: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
		return fmt.Errorf("taking the schema lock: %w", err)
	}
	if check != nil {
		if err := check(ctx, tx); err != nil {
			return err
		}
	}
	for _, step := range steps {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", step.Object).Scan(&exists); err != nil {
			return fmt.Errorf("looking up %s: %w", step.Object, err)
		}
		if !exists {
			if _, err := tx.Exec(ctx, step.SQL); err != nil {
				return fmt.Errorf("%s: %w", step.What, err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing the schema: %w", err)
	}
	return nil
}
