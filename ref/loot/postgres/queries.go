package postgres

import "strings"

// queries holds every statement. Each reads the clock as now(), the
// transaction's start time: one value for every statement of a call, so a
// call judges its guard and writes its times by one "now", as the Store
// contract asks. A statement that waits for a row lock keeps the now it
// started with; that is safe because the lock it waited for is what
// serializes it (a claim that waited for the settle CAS finds SETTLING
// when it re-checks the row) and a late now only postpones a deadline or a
// takeover, never advances it. clock_timestamp() would give each
// evaluation its own instant, so a guard and the time it writes could
// disagree within one call.
//
// Status writes are conditional UPDATEs whose WHERE is the transitions
// table plus the guard of loot.Check*, RETURNING the row they wrote. A
// status test beside a key is written as CASE (or <>) so that it cannot
// match a partial index's predicate: the row is found by its key whatever
// the statistics say. With "status = 'PENDING'" beside the grant's key,
// the generic plan of deliver measured scanning every PENDING grant to
// update one, the backlog an inventory outage leaves exactly when
// compensation must be fast. When
// one matches no row, the store reads the row (readSession) in a second
// statement to tell which guard refused; see store.go's retry for a row
// that moved in between. claim reads it in the same statement (see there).
type queries struct {
	readSession string // $1 session: the row and its members
	now         string // the clock, read with readSession to judge a refusal

	open          string
	startClaiming string
	cancel        string
	beginSettle   string
	record        string

	claim  string
	claims string

	grants             string
	markDelivered      string
	markDeliveredBatch string
	leaseGrants        string
	overdue            string
	snapshot           string

	deliver      string
	deliverBatch string
	deliverLock  string
	holding      string

	batchBeginSettle  string
	batchClaims       string
	batchReadSessions string
	batchRecord       string
	batchClaim        string
	batchPriorClaims  string
}

// sessionRow are the session's own columns, of a row named s.
const sessionRow = `s.session_no, s.dungeon_code, s.loot_code, s.quantity, s.rule_version, s.deadline_at,
	s.status, s.fence, s.opened_at, s.settle_until, s.allocated`

// sessionCols are the columns scanSession reads: the row and its members.
const sessionCols = sessionRow + `,
	ARRAY(SELECT m.player_id FROM loot_member m WHERE m.session_no = s.session_no ORDER BY m.player_id)`

// grantCols are the columns scanGrant reads.
const grantCols = `grant_no, session_no, player_id, loot_code, quantity, rank, status, attempts, lease_until`

var sqlQueries = queries{
	readSession: `SELECT ` + sessionCols + ` FROM loot_session s WHERE s.session_no = $1`,
	now:         `SELECT now()`,

	// Open: the session and its members in one statement (the member rows
	// only if this statement inserted the session). $6 > now() is
	// CheckOpen; a session that exists is left as it is.
	// Open: the session and its members in one statement (the member rows
	// only if this statement inserted the session: their rows are not
	// visible to it, so it returns the members it was given, sorted by
	// Normalize). $6 > now() is CheckOpen; a session that exists is left as
	// it is.
	open: `WITH s AS (
			INSERT INTO loot_session (session_no, dungeon_code, loot_code, quantity, rule_version, deadline_at,
				status, fence, opened_at, allocated)
			SELECT $1::text, $2::text, $3::text, $4::integer, $5::text, $6::timestamptz, 'OPEN', 0, now(), 0
			WHERE $6::timestamptz > now()
			ON CONFLICT (session_no) DO NOTHING
			RETURNING *
		), m AS (
			INSERT INTO loot_member (session_no, player_id)
			SELECT s.session_no, p FROM s, unnest($7::bigint[]) AS p
		)
		SELECT ` + sessionRow + `, $7::bigint[] FROM s`,
	startClaiming: `UPDATE loot_session s SET status = 'CLAIMING'
		WHERE s.session_no = $1 AND s.status = 'OPEN'
		RETURNING ` + sessionCols,
	cancel: `UPDATE loot_session s SET status = 'CANCELED'
		WHERE s.session_no = $1 AND s.status IN ('OPEN', 'CLAIMING', 'SETTLING')
		RETURNING ` + sessionCols,
	// The settle CAS: the source document's lockForSettle plus the takeover
	// of a settler whose lease ended, each bumping the fence.
	beginSettle: `UPDATE loot_session s SET status = 'SETTLING', fence = s.fence + 1, settle_until = now() + $2::interval
		WHERE s.session_no = $1
			AND CASE s.status WHEN 'CLAIMING' THEN s.deadline_at <= now() WHEN 'SETTLING' THEN s.settle_until <= now() ELSE false END
		RETURNING ` + sessionCols,
	// RecordGrants: close under the fence, insert every grant (one
	// multi-row INSERT from arrays) and the snapshot, in one statement; the
	// inserts take their rows from s, so they happen only if the close did.
	record: `WITH s AS (
			UPDATE loot_session SET status = 'CLOSED', allocated = $3
			WHERE session_no = $1 AND CASE status WHEN 'SETTLING' THEN fence = $2 ELSE false END
			RETURNING *
		), g AS (
			INSERT INTO loot_grant (grant_no, session_no, player_id, loot_code, quantity, rank, status, attempts, lease_until)
			SELECT u.grant_no, s.session_no, u.player_id, u.loot_code, u.quantity, u.rank, 'PENDING', 0, now() + $4::interval
			FROM s, unnest($5::text[], $6::bigint[], $7::text[], $8::integer[], $9::integer[])
				AS u(grant_no, player_id, loot_code, quantity, rank)
		), a AS (
			INSERT INTO loot_snapshot (session_no, fence, dungeon_code, loot_code, quantity, deadline_at, rule_version,
				members, claims, claims_hash, winners, recorded_at)
			SELECT s.session_no, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, now() FROM s
		)
		SELECT ` + sessionCols + ` FROM s`,

	// Claim: membership (the join), status and deadline judged in the
	// statement that writes, with the session row under FOR SHARE, which
	// conflicts with the CAS's row lock: a claim either commits before the
	// CAS reads the claims or re-checks the row after it and finds
	// SETTLING. Only a row lock gives that re-check: FOR KEY SHARE does
	// not conflict with the CAS's FOR NO KEY UPDATE, and a lock of another
	// kind (an advisory lock the CAS would take exclusive) must be taken in
	// a statement of its own before this one, whose snapshot would
	// otherwise predate the wait; that statement measured costing what
	// FOR SHARE does (BenchmarkLootClaim's comment). An identical repeat matches the conflict but not its WHERE,
	// so it writes no row and changes nothing; a changed intent takes the
	// new now. xmax = 0 on a returned row means it was inserted, not
	// updated (PostgreSQL's marker of a row version no transaction has
	// locked or replaced).
	//
	// The same statement explains a write that returned nothing (one round
	// trip either way): the write's row (w) or, when w is empty, one row of
	// what CheckClaim needs: the session's status, deadline and fence,
	// membership, the player's claim and now; no row when there is no
	// session. NOT EXISTS (SELECT 1 FROM w) is uncorrelated, so it is a
	// one-time filter: a claim that wrote reads nothing more (a join
	// filter instead, measured, cost a successful claim twice the
	// database CPU). That read sees the statement's snapshot, taken before
	// the write waited for any lock, so a refusal by a row that moved
	// since (a CAS that committed while the write waited, a claim inserted
	// after the snapshot) reads as "should have been written", and Claim
	// tries again (errRaced): the next statement's snapshot has the move.
	claim: `WITH w AS (
			INSERT INTO loot_claim (session_no, player_id, intent, claimed_at)
			SELECT s.session_no, m.player_id, $3, now()
			FROM loot_session s JOIN loot_member m ON m.session_no = s.session_no AND m.player_id = $2
			WHERE s.session_no = $1 AND CASE s.status WHEN 'CLAIMING' THEN s.deadline_at > now() ELSE false END
			FOR SHARE OF s
			ON CONFLICT (session_no, player_id) DO UPDATE
				SET intent = EXCLUDED.intent, claimed_at = EXCLUDED.claimed_at
				WHERE loot_claim.intent <> EXCLUDED.intent
			RETURNING claimed_at, xmax = 0 AS created
		)
		SELECT w.claimed_at, w.created, NULL::text, NULL::timestamptz, NULL::bigint, NULL::boolean, NULL::text, NULL::timestamptz, now()
		FROM w
		UNION ALL
		SELECT NULL, NULL, s.status, s.deadline_at, s.fence,
			EXISTS (SELECT 1 FROM loot_member m WHERE m.session_no = $1 AND m.player_id = $2),
			c.intent, c.claimed_at, now()
		FROM loot_session s LEFT JOIN loot_claim c ON c.session_no = $1 AND c.player_id = $2
		WHERE s.session_no = $1 AND NOT EXISTS (SELECT 1 FROM w)`,
	claims: `SELECT c.player_id, c.intent, c.claimed_at
		FROM loot_session s LEFT JOIN loot_claim c ON c.session_no = s.session_no
		WHERE s.session_no = $1 ORDER BY c.player_id`,

	grants: `SELECT g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.rank, g.status, g.attempts, g.lease_until
		FROM loot_session s LEFT JOIN loot_grant g ON g.session_no = s.session_no
		WHERE s.session_no = $1 ORDER BY g.rank`,
	// MarkDelivered after the Store's own Inventory finds the grant SUCCESS
	// already: the usual case, so the grant as it is comes back from the
	// same statement (a concurrent change after this statement's snapshot
	// shows as PENDING, and the caller asks again).
	markDelivered: `WITH u AS (
			UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = $1 AND status <> 'SUCCESS'
			RETURNING ` + grantCols + `
		)
		SELECT * FROM u
		UNION ALL
		SELECT ` + grantCols + ` FROM loot_grant WHERE grant_no = $1 AND NOT EXISTS (SELECT 1 FROM u)`,
	// MarkDeliveredBatch: markDelivered for the numbers $1, in one
	// statement; the grants already SUCCESS (the usual case, after the
	// Store's own Inventory) come back from the second branch.
	markDeliveredBatch: `WITH u AS (
			UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = ANY($1::text[]) AND status <> 'SUCCESS'
			RETURNING ` + grantCols + `
		)
		SELECT * FROM u
		UNION ALL
		SELECT ` + grantCols + ` FROM loot_grant WHERE grant_no = ANY($1::text[]) AND grant_no NOT IN (SELECT grant_no FROM u)`,
	// LeaseGrants: the due grants, oldest lease first, each locked or
	// skipped (SKIP LOCKED: a grant another compensator is leasing right
	// now is not waited for), leased for the attempt's backoff step ($2
	// holds Backoff.Lease(1..n), the last one repeating). It returns the
	// old lease so the caller can keep the order.
	leaseGrants: `UPDATE loot_grant g SET attempts = g.attempts + 1,
			lease_until = now() + ($2::interval[])[least(g.attempts + 1, cardinality($2::interval[]))]
		FROM (
			SELECT grant_no, lease_until FROM loot_grant
			WHERE status = 'PENDING' AND lease_until <= now()
			ORDER BY lease_until, grant_no LIMIT $1
			FOR UPDATE SKIP LOCKED
		) d
		WHERE g.grant_no = d.grant_no
		RETURNING g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.rank, g.status, g.attempts, g.lease_until, d.lease_until`,
	overdue: `SELECT session_no FROM (
			(SELECT session_no, deadline_at AS due FROM loot_session
				WHERE status = 'CLAIMING' AND deadline_at <= now() ORDER BY deadline_at LIMIT $1)
			UNION ALL
			(SELECT session_no, settle_until FROM loot_session
				WHERE status = 'SETTLING' AND settle_until <= now() ORDER BY settle_until LIMIT $1)
		) o ORDER BY due, session_no LIMIT $1`,
	snapshot: `SELECT s.status, a.fence, a.dungeon_code, a.loot_code, a.quantity, a.deadline_at, a.rule_version,
			a.members, a.claims, a.claims_hash, a.winners
		FROM loot_session s LEFT JOIN loot_snapshot a ON a.session_no = s.session_no
		WHERE s.session_no = $1`,

	// deliver is Inventory.Deliver without an Effect: lock the grant row
	// (every deliverer of one grant queues here, so the ledger key and the
	// grant are always locked in that order), insert the ledger row keyed
	// by grant_no unless it exists, and mark the grant SUCCESS, in one
	// statement. It returns 0 for an unknown grant.
	deliver: `WITH g AS (
			SELECT grant_no, player_id, loot_code, quantity FROM loot_grant WHERE grant_no = $1 FOR UPDATE
		), i AS (
			INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, applied_at)
			SELECT grant_no, player_id, loot_code, quantity, now() FROM g
			ON CONFLICT (grant_no) DO NOTHING
		), u AS (
			UPDATE loot_grant t SET status = 'SUCCESS' FROM g
			WHERE t.grant_no = $1 AND t.grant_no = g.grant_no AND t.status <> 'SUCCESS'
		)
		SELECT count(*) FROM g`,
	// deliverBatch is deliver for the distinct numbers $1 ($2 of them), in
	// one statement: the grants are locked in grant_no order (LockRows runs
	// above the sort), so two batches that share grants wait for each other
	// instead of deadlocking; the ledger rows and the SUCCESS are written
	// only if every number is recorded, so a batch with an unknown grant
	// applies nothing (all or none, as memory's).
	//
	// u finds its rows by = ANY($1) beside the join to g: joined by g alone,
	// a generic plan made while loot_grant was empty hashed g and scanned
	// every grant (plans_test.go).
	//
	// It returns the grants as it left them (SUCCESS, the rest of each row
	// as locked), every one of them, or none when some number is not
	// recorded: the Store answers the MarkDeliveredBatch after it from
	// them (ref/loot/internal/delivered).
	deliverBatch: `WITH g AS (
			SELECT ` + grantCols + ` FROM loot_grant WHERE grant_no = ANY($1::text[])
			ORDER BY grant_no FOR UPDATE
		), n AS (
			SELECT count(*) AS n FROM g
		), i AS (
			INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, applied_at)
			SELECT grant_no, player_id, loot_code, quantity, now() FROM g, n WHERE n.n = $2
			ON CONFLICT (grant_no) DO NOTHING
		), u AS (
			UPDATE loot_grant t SET status = 'SUCCESS' FROM g, n
			WHERE t.grant_no = ANY($1::text[]) AND t.grant_no = g.grant_no AND t.status <> 'SUCCESS' AND n.n = $2
		)
		SELECT g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.rank, 'SUCCESS', g.attempts, g.lease_until
		FROM g, n WHERE n.n = $2`,
	// deliverLock is the first statement of a delivery with an Effect: the
	// same lock and ledger insert, returning the grant and whether this
	// transaction inserted the ledger row (and so must apply the Effect).
	deliverLock: `WITH g AS (
			SELECT ` + grantCols + ` FROM loot_grant WHERE grant_no = $1 FOR UPDATE
		), i AS (
			INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, applied_at)
			SELECT grant_no, player_id, loot_code, quantity, now() FROM g
			ON CONFLICT (grant_no) DO NOTHING
			RETURNING grant_no
		)
		SELECT g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.rank, g.status, g.attempts, g.lease_until,
			EXISTS (SELECT 1 FROM i)
		FROM g`,
	holding: `SELECT coalesce(sum(quantity), 0) FROM loot_inventory WHERE player_id = $1 AND loot_code = $2`,

	batchBeginSettle: batchBeginSettle, batchClaims: batchClaims,
	batchReadSessions: batchReadSessions, batchRecord: batchRecord,
	batchClaim: batchClaim, batchPriorClaims: batchPriorClaims,
}

// withClock returns q with every now() replaced by expr: the test clock.
func (q queries) withClock(expr string) queries {
	for _, f := range q.fields() {
		*f = strings.ReplaceAll(*f, "now()", expr)
	}
	return q
}

// fields lists every statement (queries_test.go checks that none is
// missing, so the test clock reaches them all).
func (q *queries) fields() []*string {
	return []*string{
		&q.readSession, &q.now, &q.open, &q.startClaiming, &q.cancel, &q.beginSettle, &q.record,
		&q.claim, &q.claims, &q.grants, &q.markDelivered, &q.markDeliveredBatch,
		&q.leaseGrants, &q.overdue, &q.snapshot, &q.deliver, &q.deliverBatch, &q.deliverLock, &q.holding,
		&q.batchBeginSettle, &q.batchClaims, &q.batchReadSessions, &q.batchRecord,
		&q.batchClaim, &q.batchPriorClaims,
	}
}
