// Package postgres is loot.Store (and loot.Reader) on PostgreSQL with pgx,
// and a loot.Inventory in the same database: exactly once from the settle
// CAS to the item, for any number of nodes on one database.
//
// Tables (the const Schema, which Open creates where missing): loot_session
// (with fence and settle_until), loot_member (the team snapshot),
// loot_claim (one row per session and player), loot_grant (keyed by the
// source document's grant number), loot_snapshot (the audit record) and
// loot_inventory (the Inventory's ledger, keyed by grant number).
//
// Each Store method is one statement (BeginSettle: one batch of the CAS and
// the frozen claims' read, one implicit transaction): a conditional write
// with status, deadline, lease, fence and membership in its WHERE, never
// read first, returning the row it wrote; only a write that matched nothing
// is followed by a read of the row, to say which guard refused. The claim
// reads the session row FOR SHARE, so it serializes with the CAS's UPDATE;
// RecordGrants closes the session and inserts every grant (one multi-row
// INSERT) and the snapshot in one statement; LeaseGrants is UPDATE ... FROM
// (SELECT ... FOR UPDATE SKIP LOCKED). Every time is the database's now(),
// the transaction's start (queries.go says why); Options.TestClock replaces
// it, in tests only. Options.Batch coalesces concurrent settles (batch.go).
//
// The caller's duties, beyond package loot's:
//
//  1. Run under READ COMMITTED (PostgreSQL's default): the statements rely
//     on a blocked UPDATE re-checking the row it waited for.
//  2. Give the application's role SELECT, INSERT and UPDATE on the six
//     tables; create them from Schema as another role, or let Open create
//     them once with CREATE on the schema.
//  3. Deliver with the Store's Inventory (an Effect puts the item into your
//     own tables in its transaction), or key your own inventory's ledger by
//     loot.Grant.No under a unique constraint.
//  4. Use a loot.Lock (ref/loot/redis) only as an optimisation: the CAS and
//     the fence decide.
//
// Use:
//
//	st, err := postgres.Open(ctx, "postgres://app@db/game", postgres.Options{})
//	svc, err := loot.New(loot.Config{Store: st, Inventory: st.Inventory(nil), Fairness: history, Lock: lock})
package postgres
