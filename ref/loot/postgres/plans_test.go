package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// TestKeyedStatementsFindRowsByKey: with a backlog in the tables (sessions
// due, SETTLING, grants PENDING) that the statistics have not seen (they
// were taken when every session was CLOSED and every grant SUCCESS, as in
// a healthy system before an inventory outage), the generic plan of every
// statement that looks one session or grant up by key must not reach it
// through the partial status indexes: deliver once scanned every PENDING
// grant to update one, and the batched CAS every due session. Written with
// a plain status = '...' beside the key, claim, markDelivered, deliver and
// both batched statements fail here (each was tried). (Overdue and
// LeaseGrants are meant to read those indexes and are not listed.)
func TestKeyedStatementsFindRowsByKey(t *testing.T) {
	url := testserver.Postgres(t)
	st, err := Open(t.Context(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	conn, err := st.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range []string{
		`INSERT INTO loot_session (session_no, dungeon_code, loot_code, quantity, rule_version, deadline_at, status, fence, opened_at, settle_until, allocated)
		SELECT 'S-' || g, 'D', 'L', 1, 'v1', now() - interval '1 hour', 'CLOSED', 1, now() - interval '2 hours', now() - interval '1 hour', 0
		FROM generate_series(1, 4000) g`,
		`INSERT INTO loot_member SELECT 'S-' || g, 1 FROM generate_series(1, 4000) g`,
		`INSERT INTO loot_grant SELECT 'S-' || g || ':1:L', 'S-' || g, 1, 'L', 1, 1, 'SUCCESS', 0, now() FROM generate_series(1, 4000) g`,
		`ANALYZE`,
		`UPDATE loot_session SET status = CASE WHEN right(session_no, 1)::int % 2 = 0 THEN 'CLAIMING' ELSE 'SETTLING' END`,
		`UPDATE loot_grant SET status = 'PENDING'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	checkPlans(t, conn, keyedStatements(), "loot_session_claiming", "loot_session_settling", "loot_grant_pending")
}

// TestKeyedStatementsFindRowsByKeyOnAFreshDatabase: on a database whose
// tables are empty, as a new deployment's are when its connections
// prepare their statements, no keyed statement's generic plan scans a
// whole table: a connection keeps its plan while the table grows.
// deliverBatch's UPDATE, joined to its locked grants alone, was planned as
// a hash over a Seq Scan of loot_grant here, and batchPriorClaims over
// one of loot_claim. (Not covered: a table of a page or so, neither empty
// nor analyzed, on which a Seq Scan is the planner's fair choice for
// deliverBatch's g; a Store opened on a brand-new database keeps it until
// its connections are recycled. The benchmarks plan on a history for
// that reason: bench_test.go's historySessions.)
func TestKeyedStatementsFindRowsByKeyOnAFreshDatabase(t *testing.T) {
	st, err := Open(t.Context(), testserver.Postgres(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conn, err := st.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	checkPlans(t, conn, keyedStatements(), "Seq Scan on loot_")
}

// planCase is a statement to plan, its parameter types and values.
type planCase struct{ name, sql, types, args string }

// keyedStatements are the statements that look sessions or grants up by
// key. (Overdue and LeaseGrants are meant to read the partial indexes and
// are not listed.)
func keyedStatements() []planCase {
	q := sqlQueries
	return []planCase{
		{"beginSettle", q.beginSettle, "text, interval", "'S-2', '1 minute'"},
		{"record", q.record, "text, bigint, integer, interval, text[], bigint[], text[], integer[], integer[], bigint, text, text, integer, timestamptz, text, bigint[], jsonb, text, bigint[]",
			"'S-3', 1, 0, '1 minute', '{}', '{}', '{}', '{}', '{}', 1, 'D', 'L', 1, now(), 'v1', '{1}', '[]', 'h', '{}'"},
		{"claim", q.claim, "text, bigint, text", "'S-2', 1, 'NEED'"},
		{"markDelivered", q.markDelivered, "text", "'S-5:1:L'"},
		{"deliver", q.deliver, "text", "'S-7:1:L'"},
		{"deliverLock", q.deliverLock, "text", "'S-9:1:L'"},
		{"batchClaim", q.batchClaim, "text[], bigint[], text[]", "'{S-2,S-4}', '{1,1}', '{NEED,NEED}'"},
		{"batchPriorClaims", q.batchPriorClaims, "text[], bigint[]", "'{S-2,S-4}', '{1,1}'"},
		{"batchBeginSettle", q.batchBeginSettle, "text[], interval[]", "'{S-2,S-4}', '{1 minute,1 minute}'"},
		{"batchRecord", q.batchRecord, "text[], bigint[], integer[], interval[], text[], text[], bigint[], text[], integer[], integer[], text[], bigint[], text[], text[], integer[], timestamptz[], text[], text[], text[], text[], text[]",
			"'{S-3}', '{1}', '{0}', '{1 minute}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}'"},
		{"deliverBatch", q.deliverBatch, "text[], bigint", "'{S-5:1:L,S-7:1:L}', 2"},
		{"markDeliveredBatch", q.markDeliveredBatch, "text[]", "'{S-5:1:L,S-7:1:L}'"},
		{"readSession", q.readSession, "text", "'S-2'"},
		{"claims", q.claims, "text", "'S-2'"},
		{"grants", q.grants, "text", "'S-2'"},
		{"snapshot", q.snapshot, "text", "'S-2'"},
		{"batchClaims", q.batchClaims, "text[]", "'{S-2,S-4}'"},
		{"batchReadSessions", q.batchReadSessions, "text[]", "'{S-2,S-4}'"},
	}
}

// checkPlans fails t if the generic plan of a case mentions any of bad.
func checkPlans(t *testing.T, conn *pgxpool.Conn, cases []planCase, bad ...string) {
	t.Helper()
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) // EXPLAIN ANALYZE would write; plain EXPLAIN does not, but keep the tables as they are
			for _, s := range []string{"SET LOCAL plan_cache_mode = force_generic_plan", "PREPARE " + tc.name + "(" + tc.types + ") AS " + tc.sql} {
				if _, err := tx.Exec(ctx, s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			rows, err := tx.Query(ctx, "EXPLAIN EXECUTE "+tc.name+"("+tc.args+")")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			for _, b := range bad {
				if strings.Contains(text, b) {
					t.Errorf("the generic plan of %s has %s, a scan of the whole table or backlog:\n%s\nto reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run %s ./ref/loot/postgres/",
						tc.name, b, text, t.Name())
				}
			}
		})
	}
}
