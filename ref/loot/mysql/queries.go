package mysql

import "strings"

// queries holds every statement, with {now} replaced once at Open by the
// store's clock: NOW(6), or the test clock's subquery (Schema's routines
// are written with NOW(6), replaced the same way: routine.clocked). NOW(6)
// is constant within a statement, so a statement that names {now} twice
// judges both by one instant.
//
// Isolation (of these statements and of those in Schema's routines,
// loot_claim_v1 being claim, loot_begin_settle_v2 the settle CAS and
// loot_record_v3 the fenced close): every statement that a correctness
// argument leans on is a
// locking read or a write, so the store is correct under REPEATABLE READ
// (MySQL's default, which the tests run) and READ COMMITTED alike (the
// tests run the conformance suite under both). The arguments:
//   - claim is INSERT ... SELECT ... LOCK IN SHARE MODE: it reads the
//     session row under a shared lock, so it serializes with the settle
//     CAS (an UPDATE, an exclusive lock): a claim either commits before the
//     CAS froze the claims, and is among them, or waits for it and finds
//     the session SETTLING. Under READ COMMITTED an INSERT ... SELECT
//     without the clause reads a snapshot and takes no lock: a claim could
//     then commit after the CAS, on record but never ranked.
//   - Every status change is one conditional UPDATE on the session row;
//     when it matches nothing, the row is read again with LOCK IN SHARE
//     MODE (the latest committed version, whatever the read view) to name
//     the refusal. Under REPEATABLE READ the refused UPDATE kept its lock
//     on the row, so that read sees the state that refused it; under READ
//     COMMITTED it may see a later one, which is as true an answer.
//   - The settle's frozen claims are a plain read after the CAS, under its
//     lock: a claim holds its shared lock on the session row until it
//     commits, so every claim either committed before the CAS got the row
//     (and the read, whose snapshot is taken after the CAS under either
//     level: at the transaction's first plain read, which is this one in
//     loot_begin_settle_v2, where it reads the members with their claims)
//     sees it, or waits for the CAS and is refused. A locking read there
//     would add gap locks under REPEATABLE READ that stall the neighbouring
//     session's claims, and guard nothing more.
//   - loot_begin_settle_v2's UPDATE names its index (FORCE INDEX
//     (uk_session_no)): the status indexes are Overdue's, and without the
//     hint the range optimizer weighs them for the OR of the two due
//     states at every call (BenchmarkSettleCost, raw CALLs: 187-200 us of
//     server CPU with it, 240-263 without, three runs). The row it locks
//     is the same. loot_record_v3's closing UPDATE names it too: without
//     it, EXPLAIN of that statement ranges over idx_status_deadline's
//     SETTLING entries (which, under REPEATABLE READ, locks every entry it
//     scans, other sessions' included), and BenchmarkSettleCost's
//     variant record-no-hint took 270 and 283 us of server CPU in the
//     record phase against 243 and 267 with it (two runs). loot_claim_v1
//     has none: there the hint measured worse (1.18-1.21x:
//     BenchmarkClaimCost).
//   - leaseSelect is SELECT ... FOR UPDATE SKIP LOCKED (MariaDB 10.6,
//     MySQL 8.0): concurrent compensators each take other grants, and the
//     UPDATE that follows moves their leases into the future. Its
//     transaction runs under READ COMMITTED whatever the server's level:
//     under REPEATABLE READ the scan of idx_status_lease also locks the
//     gap after the due grants (a next-key lock on the first entry past
//     them), which is where a new PENDING grant goes, so every settle's
//     grant INSERT waited for the compensator's COMMIT; a compensator
//     paused inside that transaction (SIGSTOP, a VM pause) stalled every
//     settle until it woke (TestE2ESIGSTOPPastTheLease on MariaDB failed
//     so in a CI run, 2026-12-04: the taking-over settle closed the
//     session 6 ms after the paused instance was killed). Under READ
//     COMMITTED a locking read locks only the rows it returns.
//   - Reads (the Reader) are single plain SELECTs: one consistent snapshot
//     each, no locks.
type queries struct {
	readSession, readSessionLocked string
	now                            string

	openSession string
	openMembers string // + placeholders
	openList    string
	startClaim  string
	cancel      string
	readWon     string

	claim           string
	claimTx         string // several statements; Open enables multiStatements for it
	claimCall       string // CALL of Schema's loot_claim_v1 (see Claim)
	claimBatchCall  string // CALL of Schema's loot_claim_batch_v2 (see claimBatch)
	beginSettleCall string // CALL of Schema's loot_begin_settle_v2 (see BeginSettle)
	recordCall      string // CALL of Schema's loot_record_v3 (see RecordGrants)
	// CALLs of Schema's loot_begin_settle_batch_v3 and loot_record_batch_v4
	// (settlebatch.go).
	beginSettleBatchCall, recordBatchCall string

	markDelivered string
	readGrant     string
	readGrants    string // + the grant numbers' IN list
	leaseSelect   string
	leaseUpdate   string // + id placeholders
	leaseRead     string // + id placeholders
	overdue       string

	claims   string
	grants   string
	snapshot string

	deliverTx          string // several statements, as claimTx
	deliverBatchLedger string // + the grant numbers' IN list, then DeliverBatch's guard
	applied            string
}

const sessionColumns = sessionRowColumns + `,
	COALESCE(l.players, (SELECT GROUP_CONCAT(m.player_id ORDER BY m.player_id SEPARATOR ',') FROM loot_member m WHERE m.session_no = s.session_no))`

// sessionFrom is what sessionColumns are read from: the session row (s)
// and its member list (l), kept by Open in the transaction that wrote the
// members. A session without one (opened by a version before
// loot_member_list) has its list built from loot_member, as every read
// did before; COALESCE runs that subquery only then.
const sessionFrom = `loot_session s ` + memberListJoin

// memberListJoin joins a session row s to its member list l.
const memberListJoin = `LEFT JOIN loot_member_list l ON l.session_no = s.session_no`

// sessionRowColumns are sessionColumns but the member list, which cost
// the server as much as the rest of the read when every read was a
// GROUP_CONCAT of loot_member: MariaDB builds a temporary table for each
// (BenchmarkSettleCost: the list read in a constant's place took
// 0.72-0.83x base's server CPU per settle in five runs, both routines'
// lists together; loot_member_list is the cheaper read). A routine that
// reads the members another way selects these and NULL in the list's
// place.
const sessionRowColumns = `s.session_no, s.dungeon_code, s.loot_code, s.total_quantity, s.allocated_quantity,
	s.status, s.rule_version, s.deadline_at, s.fence, s.settle_until, s.opened_at`

const grantColumns = `grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, retry_count, lease_until`

func newQueries(now string) queries {
	q := strings.NewReplacer("{now}", now).Replace
	readSession := q(`SELECT ` + sessionColumns + `, {now} FROM ` + sessionFrom + ` WHERE s.session_no = ?`)
	// One statement: status, deadline and membership are judged under a
	// shared lock on the session row, in the write. A new intent moves
	// the claim time (created_at is assigned before intent_type, so it
	// compares with the old intent); requests changes on every duplicate,
	// so 0 rows affected means refused.
	claim := q(`INSERT INTO loot_intent (session_no, player_id, intent_type, priority, created_at)
		SELECT s.session_no, m.player_id, ?, ?, {now}
		FROM loot_session s JOIN loot_member m ON m.session_no = s.session_no AND m.player_id = ?
		WHERE s.session_no = ? AND s.status = 'CLAIMING' AND s.deadline_at > {now}
		LOCK IN SHARE MODE
		ON DUPLICATE KEY UPDATE
			created_at = IF(intent_type = VALUES(intent_type), created_at, VALUES(created_at)),
			intent_type = VALUES(intent_type), priority = VALUES(priority), requests = requests + 1`)
	// What answers claim, read in its transaction (claimTx: the
	// transaction, the write, this read and the commit in one round trip;
	// see Claim): one row per session, the write's rows affected
	// (ROW_COUNT(), of the statement before), what CheckClaim needs to
	// name a refusal (status, deadline, fence, membership of the player,
	// the clock) and the claim as written; no row when there is no
	// session. It locks what it reads (LOCK IN SHARE MODE: the latest
	// committed version under either isolation level, as
	// readSessionLocked): the session row the write already holds, and
	// the claim row, which the write holds when it wrote one and which,
	// absent, takes a gap lock held only until the COMMIT in the same
	// packet.
	claimRead := q(`SELECT ROW_COUNT(), s.status, s.deadline_at, s.fence,
			EXISTS (SELECT 1 FROM loot_member m WHERE m.session_no = s.session_no AND m.player_id = ?),
			c.intent_type, c.created_at, {now}
		FROM loot_session s LEFT JOIN loot_intent c ON c.session_no = s.session_no AND c.player_id = ?
		WHERE s.session_no = ? LOCK IN SHARE MODE`)
	// The ledger row of a grant, copied from the recorded grant: a
	// duplicate (delivered before) changes nothing.
	deliverLedger := q(`INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, delivered_at)
		SELECT grant_no, player_id, loot_code, quantity, {now} FROM loot_grant WHERE grant_no = ?
		ON DUPLICATE KEY UPDATE loot_inventory.id = loot_inventory.id`)
	const grantExists = `SELECT COUNT(*) FROM loot_grant WHERE grant_no = ?`
	return queries{
		readSession:       readSession,
		readSessionLocked: readSession + ` LOCK IN SHARE MODE`,
		now:               q(`SELECT {now}`),

		// The deadline is judged in the insert itself; an existing
		// session makes it a no-op (0 rows), whatever the spec says.
		openSession: q(`INSERT INTO loot_session
			(session_no, dungeon_code, loot_code, total_quantity, status, rule_version, deadline_at, opened_at)
			SELECT ?, ?, ?, ?, 'OPEN', ?, ?, {now} FROM DUAL WHERE ? > {now}
			ON DUPLICATE KEY UPDATE session_no = session_no`),
		openMembers: `INSERT INTO loot_member (session_no, player_id) VALUES `,
		openList:    `INSERT INTO loot_member_list (session_no, players) VALUES (?, ?)`,
		startClaim:  `UPDATE loot_session SET status = 'CLAIMING' WHERE session_no = ? AND status = 'OPEN'`,
		cancel: `UPDATE loot_session SET status = 'CANCELED'
			WHERE session_no = ? AND status IN ('OPEN', 'CLAIMING', 'SETTLING')`,
		// What answers a change (see Store.change): whether its UPDATE
		// matched, and the session row as it left it, locked as
		// readSessionLocked.
		readWon: q(`SELECT @loot_won, ` + sessionColumns + `, {now} FROM ` + sessionFrom + ` WHERE s.session_no = ? LOCK IN SHARE MODE`),

		claim:           claim,
		claimTx:         `START TRANSACTION; ` + claim + `; ` + claimRead + `; COMMIT`,
		claimCall:       callOf(now, "loot_claim_v1", 4),
		claimBatchCall:  callOf(now, "loot_claim_batch_v2", 1),
		beginSettleCall: callOf(now, "loot_begin_settle_v2", 2),
		recordCall:      callOf(now, "loot_record_v3", 10),

		beginSettleBatchCall: callOf(now, "loot_begin_settle_batch_v3", 1),
		recordBatchCall:      callOf(now, "loot_record_batch_v4", 3),

		markDelivered: `UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = ? AND status = 'PENDING'`,
		readGrant:     `SELECT ` + grantColumns + ` FROM loot_grant WHERE grant_no = ?`,
		readGrants:    `SELECT ` + grantColumns + ` FROM loot_grant WHERE grant_no IN `,
		// now is read by its own statement first (LeaseGrants), so the
		// test clock's table is never under FOR UPDATE SKIP LOCKED.
		leaseSelect: `SELECT id FROM loot_grant WHERE status = 'PENDING' AND lease_until <= ?
			ORDER BY lease_until, id LIMIT ? FOR UPDATE SKIP LOCKED`,
		// The n-th lease (retry_count n-1 before it) holds the grant
		// min(Base * 2^(n-1), Max), as loot.Backoff.Lease, in
		// nanoseconds cut to microseconds. The exponent is capped so POW
		// stays finite; Base * 2^62 is above any Max.
		// MySQL assigns left to right, each assignment seeing the ones
		// before it: lease_until must come first, from the old count.
		leaseUpdate: `UPDATE loot_grant
			SET lease_until = ? + INTERVAL (LEAST(? * POW(2, LEAST(retry_count, 62)), ?) DIV 1000) MICROSECOND,
				retry_count = retry_count + 1
			WHERE id IN `,
		leaseRead: `SELECT id, ` + grantColumns + ` FROM loot_grant WHERE id IN `,
		overdue: q(`(SELECT session_no, deadline_at AS due FROM loot_session
				WHERE status = 'CLAIMING' AND deadline_at <= {now} ORDER BY deadline_at LIMIT ?)
			UNION ALL
			(SELECT session_no, settle_until FROM loot_session
				WHERE status = 'SETTLING' AND settle_until <= {now} ORDER BY settle_until LIMIT ?)
			ORDER BY due, session_no LIMIT ?`),

		claims: `SELECT c.player_id, c.intent_type, c.created_at
			FROM loot_session s LEFT JOIN loot_intent c ON c.session_no = s.session_no
			WHERE s.session_no = ? ORDER BY c.player_id`,
		grants: `SELECT g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.grant_rank, g.status, g.retry_count, g.lease_until
			FROM loot_session s LEFT JOIN loot_grant g ON g.session_no = s.session_no
			WHERE s.session_no = ? ORDER BY g.grant_rank`,
		snapshot: `SELECT s.status, a.snapshot
			FROM loot_session s LEFT JOIN loot_audit a ON a.session_no = s.session_no
			WHERE s.session_no = ?`,

		// Deliver's transaction: the grant marked, the ledger row, and
		// whether the grant exists (the answer when neither wrote).
		deliverTx: `START TRANSACTION; UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = ? AND status = 'PENDING'; ` +
			deliverLedger + `; ` + grantExists + `; COMMIT`,
		// DeliverBatch's ledger rows, as deliverLedger's.
		deliverBatchLedger: q(`INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, delivered_at)
		SELECT grant_no, player_id, loot_code, quantity, {now} FROM loot_grant WHERE grant_no IN `),
		applied: `SELECT COUNT(*) FROM loot_inventory WHERE grant_no = ?`,
	}
}

// callOf is the CALL of Schema's routine name, for the store's clock now,
// with n parameters.
func callOf(now, name string, n int) string {
	for _, r := range routines {
		if r.name == name {
			return "CALL " + r.clocked(now).name + "(" + placeholders(n, "?") + ")"
		}
	}
	panic("mysql: Schema has no routine " + name)
}
