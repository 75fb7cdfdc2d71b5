package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
)

// Schema is what Open creates, table by table and routine by routine,
// when one is missing.
// The source document's three tables keep their names, keys and columns
// where the reference has the same notion (loot_session, loot_intent,
// loot_grant with uk_session_no, uk_session_player, uk_grant_no); the
// changes, each for a reason:
//
//   - Every time is DATETIME(6), written in UTC (the session's time_zone is
//     '+00:00') from the database's clock: the document's DATETIME keeps
//     whole seconds, and claims in the same second tie on created_at.
//   - Every table is utf8mb4 with MariaDB's NO PAD binary collation: codes
//     are compared byte for byte ("S-1" is not "s-1", and "S-1 " is not
//     "S-1", which a PAD SPACE collation such as utf8mb4_bin would
//     equate). On MySQL 8 the equivalent is utf8mb4_0900_bin.
//   - loot_session: fence replaces the document's version (bumped by each
//     won settle CAS only); settle_until is the settler's lease; mode and
//     updated_at are gone (one mode; nothing reads them). Indexes on
//     (status, deadline_at) and (status, settle_until) serve Overdue.
//   - loot_member is the team snapshot taken at Open (the document says to
//     take one; its schema has none). loot_member_list is the same team as
//     one row, "101,102,103" in player order, written by Open in the same
//     transaction: every read of a session joins it (queries.go's
//     sessionFrom), where a GROUP_CONCAT of loot_member would cost the
//     server a subquery and a temporary table at each read
//     (BenchmarkSettleCost: a settle's server CPU 0.96-0.97x with the
//     list rows than without them). A session without one, opened by a
//     version before the table, is read from loot_member as before.
//   - loot_intent: fair_score is gone (fairness is the server's, read by the
//     settler and kept in the audit snapshot, never sent by a client);
//     requests counts the claim requests received, retries included.
//   - loot_grant: grant_no is VARCHAR(160), since session:player:loot is up
//     to 150 bytes (the document's 96 is too short); grant_rank, and
//     lease_until with retry_count for compensation, which
//     (status, lease_until) indexes.
//   - loot_audit is the document's settlement snapshot (4.6): participants,
//     effective claims, allocated, rule version, and the whole
//     loot.Snapshot as JSON so the result replays.
//   - loot_inventory is the same-database Inventory's ledger: one row per
//     delivered grant, unique by grant_no.
//   - CHECK constraints (the document has none) state what the code
//     assumes of every row, as postgres.Schema's do: a row corrupted or
//     edited by hand (total_quantity = -1) is refused by the database as
//     well as by loot.Decide and loot.Replay. MariaDB enforces CHECK from
//     10.2, MySQL from 8.0.16; older servers parse and ignore them. Codes
//     are bounded in bytes (OCTET_LENGTH), as PostgreSQL's are, so both
//     stores refuse the same codes.
//
// The routines (between the DELIMITER lines, which the mariadb client
// reads and Open does not send) are the store's Claim, BeginSettle and
// RecordGrants, each one CALL: the transaction, the guarded write and the
// read that answers it run server-side; loot_begin_settle_batch_v3 and
// loot_record_batch_v4 do the same for a batch of sessions under
// Options.Batch (settlebatch.go says how). Each is SQL SECURITY INVOKER, so
// it may do only what the calling account may. A routine's name ends in
// its version: a body is never changed under a name (nodes of the
// previous version still CALL theirs during a rolling deploy), a new body
// is a new name, and Open refuses a routine of its name with another body
// (ErrSchema) when the account may read bodies. loot_claim_v1 tests
// FOUND_ROWS(), not ROW_COUNT(), after its INSERT ... RETURNING: a
// statement that returns rows leaves ROW_COUNT() at -1.
// loot_begin_settle_v2 (v1 read the members with GROUP_CONCAT in its read
// back, and the claims only when the CAS won) reads the members with
// their claims in one statement, won or not: every GROUP_CONCAT costs the
// server a temporary table, and every statement an optimization, at each
// CALL (BenchmarkSettleCost says how much). loot_record_v2 and
// loot_begin_settle_batch_v2 are their v1s reading the member list from
// loot_member_list. loot_record_v3 is v2 answering a close that won with
// its won flag alone, where v2 read the session back: the Store knows
// that row already from the BeginSettle that won the fence (settling.go
// says why it is exact), and the read back was 12-14% of a settle's
// server CPU (BenchmarkSettleCost, variant record-won-no-readback: 0.86x
// and 0.88x of base in two runs); a refused close is read back as
// before, to explain the refusal; its UPDATE names uk_session_no, as
// loot_begin_settle_v2's does (queries.go says why).
// loot_begin_settle_batch_v3 is v2 without the ORDER BY of its claims,
// which cost a temporary table and a filesort at every CALL: the Store
// sorts each session's few claims (BenchmarkSettleBatchCost, begin a CALL
// of 5: 592-633 us in three runs against 617-692 in five before).
// loot_record_batch_v3 is 4 statements where v2 was 5:
// v2 kept which decisions won in a variable (a GROUP_CONCAT over the
// locked rows) and joined it to the batch's arrays, JSON_TABLE to
// JSON_TABLE, in each INSERT, which MariaDB runs as block nested loops
// (JOIN_CACHE was 14% of the server's samples under perf); v3 writes the
// audit rows first, of the sessions SETTLING at their decision's fence,
// and lets each later statement find the won sessions by their audit row
// (settlebatch.go says why that row marks them and nothing else). Measured,
// BenchmarkLoot op=settle impl=ref-batched against doc, -count 2: server
// CPU a settle 417-473 us against v2's 490-567 at conc 16, 270-273
// against 332-370 at conc 64, settles/s 0.97x of doc's at conc 16 (v2
// 0.79x in the same hour) and 1.00-1.11x at conc 64. Later runs the same
// day put conc 16 at 0.70-0.93x: the server's CPU is no longer what
// bounds it there (settlebatch.go's two stages are). loot_record_batch_v4
// is v3 answering a batch whose closing UPDATE closed every session of it
// (ROW_COUNT() is the batch's length) with that count alone, as
// loot_record_v3 answers a single close: server CPU a settle at conc 64
// 165-170 us against v3's 200-205 an hour before (BenchmarkLoot
// op=settle impl=ref-batched, -count 2 each). loot_claim_batch_v2
// is v1 with its joins STRAIGHT_JOIN from the JSON table: v1 left the
// order to the optimizer, which drove some runs from the session table
// (BenchmarkLoot op=claim impl=ref-batched at -benchtime 1000x:
// db-cpu-us/op 140-280 in three runs of six against 30-60, with the same
// round trips; v2 10-60 in all of four), and claimBatch's lock order
// assumes the JSON table drives.
//
// Open creates only what is missing and checks that tables it did not
// create have these columns (ErrSchema otherwise), so a role with SELECT,
// INSERT, UPDATE and EXECUTE on tables and routines a DBA created from
// Schema opens the store with nothing more: no CREATE, CREATE ROUTINE,
// DELETE or DROP. It neither checks nor adds
// the CHECKs of a table that exists (adding one needs ALTER): a database
// created before they were added keeps working, defended by the code
// alone, until its DBA adds each with ALTER TABLE ... ADD CONSTRAINT
// (which checks every existing row, and refuses if one fails).
const Schema = `CREATE TABLE IF NOT EXISTS loot_session (
	id                 BIGINT      NOT NULL AUTO_INCREMENT,
	session_no         VARCHAR(64) NOT NULL,
	dungeon_code       VARCHAR(64) NOT NULL,
	loot_code          VARCHAR(64) NOT NULL,
	total_quantity     INT         NOT NULL,
	allocated_quantity INT         NOT NULL DEFAULT 0,
	status             VARCHAR(16) NOT NULL,
	rule_version       VARCHAR(16) NOT NULL,
	deadline_at        DATETIME(6) NOT NULL,
	fence              BIGINT      NOT NULL DEFAULT 0,
	settle_until       DATETIME(6) NULL,
	opened_at          DATETIME(6) NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT ck_session_codes CHECK (OCTET_LENGTH(session_no) BETWEEN 1 AND 64
		AND OCTET_LENGTH(dungeon_code) BETWEEN 1 AND 64 AND OCTET_LENGTH(loot_code) BETWEEN 1 AND 64
		AND OCTET_LENGTH(rule_version) BETWEEN 1 AND 16),
	CONSTRAINT ck_session_quantity CHECK (total_quantity >= 1),
	CONSTRAINT ck_session_allocated CHECK (allocated_quantity BETWEEN 0 AND total_quantity),
	CONSTRAINT ck_session_status CHECK (status IN ('OPEN', 'CLAIMING', 'SETTLING', 'CLOSED', 'CANCELED')),
	CONSTRAINT ck_session_fence CHECK (fence >= 0),
	CONSTRAINT ck_session_settling_has_lease CHECK (status <> 'SETTLING' OR settle_until IS NOT NULL),
	UNIQUE KEY uk_session_no (session_no),
	KEY idx_status_deadline (status, deadline_at),
	KEY idx_status_settle_until (status, settle_until)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS loot_member (
	session_no VARCHAR(64) NOT NULL,
	player_id  BIGINT      NOT NULL,
	PRIMARY KEY (session_no, player_id),
	CONSTRAINT ck_member_player CHECK (player_id > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS loot_member_list (
	session_no VARCHAR(64) NOT NULL,
	players    MEDIUMTEXT  NOT NULL,
	PRIMARY KEY (session_no),
	CONSTRAINT ck_member_list CHECK (players REGEXP '^[1-9][0-9]*(,[1-9][0-9]*)*$')
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS loot_intent (
	id          BIGINT      NOT NULL AUTO_INCREMENT,
	session_no  VARCHAR(64) NOT NULL,
	player_id   BIGINT      NOT NULL,
	intent_type VARCHAR(16) NOT NULL,
	priority    INT         NOT NULL,
	created_at  DATETIME(6) NOT NULL,
	requests    INT         NOT NULL DEFAULT 1,
	PRIMARY KEY (id),
	CONSTRAINT ck_intent_player CHECK (player_id > 0),
	CONSTRAINT ck_intent_type CHECK ((intent_type, priority) IN (('NEED', 10), ('GREED', 1), ('PASS', 0))),
	CONSTRAINT ck_intent_requests CHECK (requests >= 1),
	UNIQUE KEY uk_session_player (session_no, player_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS loot_grant (
	id          BIGINT       NOT NULL AUTO_INCREMENT,
	grant_no    VARCHAR(160) NOT NULL,
	session_no  VARCHAR(64)  NOT NULL,
	player_id   BIGINT       NOT NULL,
	loot_code   VARCHAR(64)  NOT NULL,
	quantity    INT          NOT NULL DEFAULT 1,
	grant_rank  INT          NOT NULL,
	status      VARCHAR(16)  NOT NULL,
	retry_count INT          NOT NULL DEFAULT 0,
	lease_until DATETIME(6)  NOT NULL,
	created_at  DATETIME(6)  NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT ck_grant_no CHECK (OCTET_LENGTH(grant_no) BETWEEN 1 AND 150),
	CONSTRAINT ck_grant_player CHECK (player_id > 0),
	CONSTRAINT ck_grant_quantity CHECK (quantity >= 1),
	CONSTRAINT ck_grant_rank CHECK (grant_rank >= 1),
	CONSTRAINT ck_grant_status CHECK (status IN ('PENDING', 'SUCCESS')),
	CONSTRAINT ck_grant_retry_count CHECK (retry_count >= 0),
	UNIQUE KEY uk_grant_no (grant_no),
	KEY idx_session_rank (session_no, grant_rank),
	KEY idx_status_lease (status, lease_until)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS loot_audit (
	id               BIGINT      NOT NULL AUTO_INCREMENT,
	session_no       VARCHAR(64) NOT NULL,
	fence            BIGINT      NOT NULL,
	rule_version     VARCHAR(16) NOT NULL,
	members          INT         NOT NULL,
	effective_claims INT         NOT NULL,
	allocated        INT         NOT NULL,
	claims_hash      CHAR(64)    NOT NULL,
	snapshot         LONGTEXT    NOT NULL,
	recorded_at      DATETIME(6) NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT ck_audit_fence CHECK (fence >= 1),
	CONSTRAINT ck_audit_counts CHECK (members >= 1 AND effective_claims >= 0 AND allocated >= 0),
	UNIQUE KEY uk_audit_session (session_no)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS loot_inventory (
	id           BIGINT       NOT NULL AUTO_INCREMENT,
	grant_no     VARCHAR(160) NOT NULL,
	player_id    BIGINT       NOT NULL,
	loot_code    VARCHAR(64)  NOT NULL,
	quantity     INT          NOT NULL,
	delivered_at DATETIME(6)  NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT ck_inventory_player CHECK (player_id > 0),
	CONSTRAINT ck_inventory_quantity CHECK (quantity >= 1),
	UNIQUE KEY uk_inventory_grant (grant_no),
	KEY idx_player_loot (player_id, loot_code)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_nopad_bin;
DELIMITER ;;
CREATE PROCEDURE IF NOT EXISTS loot_claim_v1(
	p_session  TEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_player   BIGINT,
	p_intent   TEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_priority INT)
SQL SECURITY INVOKER
BEGIN
	INSERT INTO loot_intent (session_no, player_id, intent_type, priority, created_at)
	SELECT s.session_no, m.player_id, p_intent, p_priority, NOW(6)
	FROM loot_session s JOIN loot_member m ON m.session_no = s.session_no AND m.player_id = p_player
	WHERE s.session_no = p_session AND s.status = 'CLAIMING' AND s.deadline_at > NOW(6)
	LOCK IN SHARE MODE
	ON DUPLICATE KEY UPDATE
		created_at = IF(intent_type = VALUES(intent_type), created_at, VALUES(created_at)),
		intent_type = VALUES(intent_type), priority = VALUES(priority), requests = requests + 1
	RETURNING intent_type, created_at, requests;
	IF FOUND_ROWS() = 0 THEN
		SELECT s.status, s.deadline_at, s.fence,
			EXISTS (SELECT 1 FROM loot_member m WHERE m.session_no = s.session_no AND m.player_id = p_player),
			NOW(6)
		FROM loot_session s WHERE s.session_no = p_session;
	END IF;
END;;
CREATE PROCEDURE IF NOT EXISTS loot_claim_batch_v2(
	p_claims LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin)
SQL SECURITY INVOKER
BEGIN
	INSERT INTO loot_intent (session_no, player_id, intent_type, priority, created_at)
	SELECT s.session_no, m.player_id, c.c_intent, c.c_priority, NOW(6)
	FROM JSON_TABLE(p_claims, '$[*]' COLUMNS (
			c_session  TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
			c_player   BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR,
			c_intent   TEXT   PATH '$[2]' ERROR ON EMPTY ERROR ON ERROR,
			c_priority BIGINT PATH '$[3]' ERROR ON EMPTY ERROR ON ERROR)) c
		STRAIGHT_JOIN loot_session s ON s.session_no = c.c_session COLLATE utf8mb4_nopad_bin
		STRAIGHT_JOIN loot_member m ON m.session_no = s.session_no AND m.player_id = c.c_player
	WHERE s.status = 'CLAIMING' AND s.deadline_at > NOW(6)
	LOCK IN SHARE MODE
	ON DUPLICATE KEY UPDATE
		created_at = IF(intent_type = VALUES(intent_type), created_at, VALUES(created_at)),
		intent_type = VALUES(intent_type), priority = VALUES(priority), requests = requests + 1
	RETURNING session_no, player_id, intent_type, created_at, requests;
	IF FOUND_ROWS() < JSON_LENGTH(p_claims) THEN
		SELECT c.c_at, s.status, s.deadline_at, s.fence,
			EXISTS (SELECT 1 FROM loot_member m WHERE m.session_no = s.session_no AND m.player_id = c.c_player),
			NOW(6)
		FROM JSON_TABLE(p_claims, '$[*]' COLUMNS (
				c_at      FOR ORDINALITY,
				c_session TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
				c_player  BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR)) c
			STRAIGHT_JOIN loot_session s ON s.session_no = c.c_session COLLATE utf8mb4_nopad_bin;
	END IF;
END;;
CREATE PROCEDURE IF NOT EXISTS loot_begin_settle_v2(
	p_session TEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_lease   BIGINT)
SQL SECURITY INVOKER
BEGIN
	DECLARE v_won BIGINT;
	START TRANSACTION;
	UPDATE loot_session FORCE INDEX (uk_session_no)
	SET status = 'SETTLING', fence = fence + 1, settle_until = NOW(6) + INTERVAL p_lease MICROSECOND
	WHERE session_no = p_session AND (
		(status = 'CLAIMING' AND deadline_at <= NOW(6)) OR
		(status = 'SETTLING' AND settle_until <= NOW(6)));
	SET v_won = ROW_COUNT();
	SELECT v_won, ` + sessionRowColumns + `, NULL, NOW(6)
	FROM loot_session s WHERE s.session_no = p_session LOCK IN SHARE MODE;
	SELECT m.player_id, c.intent_type, c.created_at
	FROM loot_member m LEFT JOIN loot_intent c ON c.session_no = m.session_no AND c.player_id = m.player_id
	WHERE m.session_no = p_session ORDER BY m.player_id;
	COMMIT;
END;;
CREATE PROCEDURE IF NOT EXISTS loot_record_v3(
	p_session   TEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_fence     BIGINT,
	p_lease     BIGINT,
	p_grants    LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_snap_fence BIGINT,
	p_rule      TEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_members   BIGINT,
	p_effective BIGINT,
	p_hash      TEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_snapshot  LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin)
SQL SECURITY INVOKER
BEGIN
	DECLARE v_won BIGINT;
	DECLARE v_allocated BIGINT DEFAULT JSON_LENGTH(p_grants);
	START TRANSACTION;
	UPDATE loot_session FORCE INDEX (uk_session_no) SET status = 'CLOSED', allocated_quantity = v_allocated
	WHERE session_no = p_session AND status = 'SETTLING' AND fence = p_fence;
	SET v_won = ROW_COUNT();
	IF v_won = 1 THEN
		INSERT INTO loot_grant
			(grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, lease_until, created_at)
		SELECT g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.grant_rank, 'PENDING',
			NOW(6) + INTERVAL p_lease MICROSECOND, NOW(6)
		FROM JSON_TABLE(p_grants, '$[*]' COLUMNS (
			grant_no   TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
			session_no TEXT   PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR,
			player_id  BIGINT PATH '$[2]' ERROR ON EMPTY ERROR ON ERROR,
			loot_code  TEXT   PATH '$[3]' ERROR ON EMPTY ERROR ON ERROR,
			quantity   BIGINT PATH '$[4]' ERROR ON EMPTY ERROR ON ERROR,
			grant_rank BIGINT PATH '$[5]' ERROR ON EMPTY ERROR ON ERROR)) g;
		INSERT INTO loot_audit
			(session_no, fence, rule_version, members, effective_claims, allocated, claims_hash, snapshot, recorded_at)
		VALUES (p_session, p_snap_fence, p_rule, p_members, p_effective, v_allocated, p_hash, p_snapshot, NOW(6));
		SELECT v_won;
	ELSE
		SELECT v_won, ` + sessionColumns + `, NOW(6)
		FROM ` + sessionFrom + ` WHERE s.session_no = p_session LOCK IN SHARE MODE;
	END IF;
	COMMIT;
END;;
CREATE PROCEDURE IF NOT EXISTS loot_begin_settle_batch_v3(
	p_batch LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin)
SQL SECURITY INVOKER
BEGIN
	DECLARE v_before LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin;
	START TRANSACTION;
	SELECT COALESCE(JSON_ARRAYAGG(JSON_ARRAY(s.session_no, s.fence)), '[]') INTO v_before
	FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (
		ord FOR ORDINALITY,
		no  TEXT PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR)) b
	STRAIGHT_JOIN loot_session s ON s.session_no = b.no COLLATE utf8mb4_nopad_bin
	FOR UPDATE;
	UPDATE JSON_TABLE(p_batch, '$[*]' COLUMNS (
		no    TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		lease BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR)) b
	STRAIGHT_JOIN loot_session s ON s.session_no = b.no COLLATE utf8mb4_nopad_bin
	SET s.status = 'SETTLING', s.fence = s.fence + 1, s.settle_until = NOW(6) + INTERVAL b.lease MICROSECOND
	WHERE (s.status = 'CLAIMING' AND s.deadline_at <= NOW(6)) OR
		(s.status = 'SETTLING' AND s.settle_until <= NOW(6));
	SELECT s.fence = f.fence + 1, ` + sessionColumns + `, NOW(6)
	FROM JSON_TABLE(v_before, '$[*]' COLUMNS (
		no    TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		fence BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR)) f
	STRAIGHT_JOIN loot_session s ON s.session_no = f.no COLLATE utf8mb4_nopad_bin
	` + memberListJoin + `;
	SELECT c.session_no, c.player_id, c.intent_type, c.created_at
	FROM JSON_TABLE(v_before, '$[*]' COLUMNS (
		no    TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		fence BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR)) f
	STRAIGHT_JOIN loot_session s ON s.session_no = f.no COLLATE utf8mb4_nopad_bin AND s.fence = f.fence + 1
	STRAIGHT_JOIN loot_intent c ON c.session_no = s.session_no;
	COMMIT;
END;;
CREATE PROCEDURE IF NOT EXISTS loot_record_batch_v4(
	p_batch  LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_grants LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin,
	p_audit  LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin)
SQL SECURITY INVOKER
BEGIN
	DECLARE v_closed BIGINT;
	START TRANSACTION;
	INSERT INTO loot_audit
		(session_no, fence, rule_version, members, effective_claims, allocated, claims_hash, snapshot, recorded_at)
	SELECT s.session_no, a.snap_fence, a.rule, a.members, a.effective, a.allocated, a.hash, a.snapshot, NOW(6)
	FROM JSON_TABLE(p_audit, '$[*]' COLUMNS (
		no         TEXT     PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		fence      BIGINT   PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR,
		allocated  BIGINT   PATH '$[2]' ERROR ON EMPTY ERROR ON ERROR,
		snap_fence BIGINT   PATH '$[3]' ERROR ON EMPTY ERROR ON ERROR,
		rule       TEXT     PATH '$[4]' ERROR ON EMPTY ERROR ON ERROR,
		members    BIGINT   PATH '$[5]' ERROR ON EMPTY ERROR ON ERROR,
		effective  BIGINT   PATH '$[6]' ERROR ON EMPTY ERROR ON ERROR,
		hash       TEXT     PATH '$[7]' ERROR ON EMPTY ERROR ON ERROR,
		snapshot   LONGTEXT PATH '$[8]' ERROR ON EMPTY ERROR ON ERROR)) a
	STRAIGHT_JOIN loot_session s ON s.session_no = a.no COLLATE utf8mb4_nopad_bin
	WHERE s.status = 'SETTLING' AND s.fence = a.fence
	FOR UPDATE;
	INSERT INTO loot_grant
		(grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, lease_until, created_at)
	SELECT g.grant_no, s.session_no, g.player_id, g.loot_code, g.quantity, g.grant_rank, 'PENDING',
		NOW(6) + INTERVAL g.lease MICROSECOND, NOW(6)
	FROM JSON_TABLE(p_grants, '$[*]' COLUMNS (
		no         TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		fence      BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR,
		lease      BIGINT PATH '$[2]' ERROR ON EMPTY ERROR ON ERROR,
		grant_no   TEXT   PATH '$[3]' ERROR ON EMPTY ERROR ON ERROR,
		player_id  BIGINT PATH '$[4]' ERROR ON EMPTY ERROR ON ERROR,
		loot_code  TEXT   PATH '$[5]' ERROR ON EMPTY ERROR ON ERROR,
		quantity   BIGINT PATH '$[6]' ERROR ON EMPTY ERROR ON ERROR,
		grant_rank BIGINT PATH '$[7]' ERROR ON EMPTY ERROR ON ERROR)) g
	STRAIGHT_JOIN loot_session s ON s.session_no = g.no COLLATE utf8mb4_nopad_bin
	STRAIGHT_JOIN loot_audit a ON a.session_no = s.session_no
	WHERE s.status = 'SETTLING' AND s.fence = g.fence;
	UPDATE JSON_TABLE(p_batch, '$[*]' COLUMNS (
		no        TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		fence     BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR,
		allocated BIGINT PATH '$[2]' ERROR ON EMPTY ERROR ON ERROR)) b
	STRAIGHT_JOIN loot_session s ON s.session_no = b.no COLLATE utf8mb4_nopad_bin
	STRAIGHT_JOIN loot_audit a ON a.session_no = s.session_no
	SET s.status = 'CLOSED', s.allocated_quantity = b.allocated
	WHERE s.status = 'SETTLING' AND s.fence = b.fence;
	SET v_closed = ROW_COUNT();
	IF v_closed = JSON_LENGTH(p_batch) THEN
		SELECT v_closed;
	ELSE
		SELECT s.status = 'CLOSED' AND s.fence = b.fence, ` + sessionColumns + `, NOW(6)
		FROM JSON_TABLE(p_batch, '$[*]' COLUMNS (
			no    TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
			fence BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR)) b
		STRAIGHT_JOIN loot_session s ON s.session_no = b.no COLLATE utf8mb4_nopad_bin
		` + memberListJoin + `
		LOCK IN SHARE MODE;
	END IF;
	COMMIT;
END;;
DELIMITER ;`

// table is one CREATE TABLE of Schema: its name, its statement, and the
// data type of each column (information_schema's DATA_TYPE), which a table
// found in the database must have.
type table struct {
	name    string
	sql     string
	columns map[string]string
}

// routine is one CREATE PROCEDURE of Schema: its name (the version is its
// last part: a routine's body is never changed under its name, since nodes
// of the previous version still CALL it during a rolling deploy; a new
// body is a new name) and its statement, as Schema writes them, with the
// production clock NOW(6).
type routine struct {
	name string
	sql  string
}

// routineNames are the routines the store CALLs (queries names them), each
// of which Schema must define, and no other.
var routineNames = []string{"loot_begin_settle_batch_v3", "loot_begin_settle_v2", "loot_claim_batch_v2", "loot_claim_v1", "loot_record_batch_v4", "loot_record_v3"}

const routineDelimiter = "\nDELIMITER ;;\n"

var (
	createTable     = regexp.MustCompile(`^CREATE TABLE IF NOT EXISTS (\w+) \(`)
	createProcedure = regexp.MustCompile(`^CREATE PROCEDURE IF NOT EXISTS (\w+)\(`)
	columnLine      = regexp.MustCompile(`^\s+([a-z_]+)\s+([A-Z]+)`)
)

// tables and routines parse Schema, so the statements and what Open checks
// are written once. Schema is what the mariadb client runs (its routines
// between DELIMITER lines); the driver has no delimiters, so each
// statement is sent alone.
var tables, routines = func() ([]table, []routine) {
	tablePart, routinePart, ok := strings.Cut(Schema, routineDelimiter)
	if !ok || !strings.HasSuffix(routinePart, "\nDELIMITER ;") {
		panic("mysql: Schema has no DELIMITER ;; ... DELIMITER ; part for its routines")
	}
	var ts []table
	for _, stmt := range strings.SplitAfter(tablePart, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		m := createTable.FindStringSubmatch(stmt)
		if m == nil {
			panic("mysql: Schema statement that is not CREATE TABLE IF NOT EXISTS: " + stmt)
		}
		t := table{name: m[1], sql: strings.TrimSuffix(stmt, ";"), columns: map[string]string{}}
		for _, line := range strings.Split(stmt, "\n")[1:] {
			if c := columnLine.FindStringSubmatch(line); c != nil && c[2] != "PRIMARY" && c[2] != "UNIQUE" && c[2] != "KEY" {
				t.columns[c[1]] = strings.ToLower(c[2])
			}
		}
		ts = append(ts, t)
	}
	var rs []routine
	for _, stmt := range strings.Split(strings.TrimSuffix(routinePart, "\nDELIMITER ;"), ";;") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		m := createProcedure.FindStringSubmatch(stmt)
		if m == nil || !slices.Contains(routineNames, m[1]) || slices.ContainsFunc(rs, func(r routine) bool { return r.name == m[1] }) {
			panic("mysql: Schema routine statement that is not CREATE PROCEDURE IF NOT EXISTS of one of " +
				strings.Join(routineNames, ", ") + ", once: " + stmt)
		}
		rs = append(rs, routine{name: m[1], sql: stmt})
	}
	if len(rs) != len(routineNames) {
		panic(fmt.Sprintf("mysql: Schema defines %d routines, the store calls %d: %s", len(rs), len(routineNames), strings.Join(routineNames, ", ")))
	}
	return ts, rs
}()

// clocked returns r for the store's clock now: r itself for NOW(6); for a
// test's clock table, r reading it instead, under a name of its own (the
// name and a hash of the clock), so that a database never holds two
// bodies under one name.
func (r routine) clocked(now string) routine {
	if now == "NOW(6)" {
		return r
	}
	h := fnv.New32a()
	h.Write([]byte(now))
	name := fmt.Sprintf("%s_t%08x", r.name, h.Sum32())
	return routine{name: name, sql: strings.Replace(strings.ReplaceAll(r.sql, "NOW(6)", now), r.name+"(", name+"(", 1)}
}

// body is the routine's body as the server keeps it
// (information_schema.ROUTINES.ROUTINE_DEFINITION): from BEGIN on.
func (r routine) body() string {
	return r.sql[strings.Index(r.sql, "\nBEGIN\n")+1:]
}

// createSchema creates the tables and routines of Schema that are missing
// (the routines reading now, the store's clock) and checks the columns of
// the tables that exist, and the body of each routine that exists when the
// account may read it (a role with EXECUTE alone sees the routine's name,
// which carries its version, and no body). It looks each up first because
// CREATE ... IF NOT EXISTS needs the CREATE (or CREATE ROUTINE) privilege
// even when the object exists. Concurrent Opens are safe: an object
// created by another node between the look-up and the CREATE makes the
// CREATE a no-op. Errors name the step, not its SQL.
func createSchema(ctx context.Context, db *sql.DB, now string) error {
	rows, err := db.QueryContext(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = DATABASE()`)
	if err != nil {
		return fmt.Errorf("mysql: open: looking up the tables: %w", err)
	}
	found := map[string]map[string]string{}
	for rows.Next() {
		var t, c, typ string
		if err := rows.Scan(&t, &c, &typ); err != nil {
			rows.Close()
			return fmt.Errorf("mysql: open: looking up the tables: %w", err)
		}
		if found[t] == nil {
			found[t] = map[string]string{}
		}
		found[t][c] = strings.ToLower(typ)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("mysql: open: looking up the tables: %w", err)
	}
	for _, t := range tables {
		cols, ok := found[t.name]
		if !ok {
			if _, err := db.ExecContext(ctx, t.sql); err != nil {
				return fmt.Errorf("mysql: open: creating table %s: %w", t.name, err)
			}
			continue
		}
		for c, typ := range t.columns {
			if cols[c] != typ {
				return fmt.Errorf("%w: %s.%s is %q, want %q", ErrSchema, t.name, c, cols[c], typ)
			}
		}
	}
	return createRoutines(ctx, db, now)
}

// createRoutines is createSchema's part for the routines.
func createRoutines(ctx context.Context, db *sql.DB, now string) error {
	rows, err := db.QueryContext(ctx, `SELECT routine_name, COALESCE(routine_definition, '') FROM information_schema.routines
		WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE'`)
	if err != nil {
		return fmt.Errorf("mysql: open: looking up the routines: %w", err)
	}
	found := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return fmt.Errorf("mysql: open: looking up the routines: %w", err)
		}
		found[name] = def
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("mysql: open: looking up the routines: %w", err)
	}
	for _, r := range routines {
		r = r.clocked(now)
		def, ok := found[r.name]
		switch {
		case !ok:
			if _, err := db.ExecContext(ctx, r.sql); err != nil {
				return fmt.Errorf("mysql: open: creating routine %s: %w", r.name, err)
			}
		case def != "" && strings.TrimSpace(def) != r.body():
			return fmt.Errorf("%w: routine %s has another body than this version's (a new body needs a new name)", ErrSchema, r.name)
		}
	}
	return nil
}
