// Package docsql is the source document's loot allocation SQL, verbatim,
// runnable on MySQL or MariaDB: its schema.sql (Schema), its LootMapper
// statements (UpsertIntent, LockForSettle, SelectRanked, InsertGrantIgnore,
// MarkClosed), and DB, which runs them as the document's Java does, each
// step a method so a test or a fault schedule can interleave them. It is
// the document's design kept for comparison with ref/loot/mysql, flaws
// included (DATETIME without fraction, check-then-upsert, an ORDER BY
// without a final tiebreak, grants outside any transaction), and is not
// meant for use. DB says which of its statements are not the document's.
package docsql

import "regexp"

// Statement is one statement of the document.
type Statement struct {
	// Name is the LootMapper method (or, for the two statements the
	// document does not show, the step it describes).
	Name string
	// Mapper is the SQL as the document writes it, with MyBatis's #{name}
	// placeholders.
	Mapper string
	// SQL is Mapper with each #{name} replaced by ?, for database/sql.
	SQL string
	// Params are the #{name} names in order: the arguments SQL takes.
	Params []string
}

var placeholder = regexp.MustCompile(`#\{(\w+)\}`)

func statement(name, mapper string) Statement {
	s := Statement{Name: name, Mapper: mapper, SQL: placeholder.ReplaceAllString(mapper, "?")}
	for _, m := range placeholder.FindAllStringSubmatch(mapper, -1) {
		s.Params = append(s.Params, m[1])
	}
	return s
}

// Schema is the document's schema.sql (section 5.1), one CREATE TABLE per
// element.
var Schema = []string{
	`CREATE TABLE IF NOT EXISTS loot_session (
	id BIGINT NOT NULL AUTO_INCREMENT,
	session_no VARCHAR(64) NOT NULL COMMENT '分配会话号，业务唯一键',
	dungeon_code VARCHAR(64) NOT NULL COMMENT '副本编码',
	loot_code VARCHAR(64) NOT NULL COMMENT '掉落物编码',
	total_quantity INT NOT NULL COMMENT '掉落总数量',
	allocated_quantity INT NOT NULL DEFAULT 0 COMMENT '已分配数量',
	mode VARCHAR(16) NOT NULL COMMENT '分配模式：NEED_GREED/BID/LEADER',
	status VARCHAR(16) NOT NULL COMMENT 'OPEN/CLAIMING/SETTLING/CLOSED/CANCELED',
	rule_version VARCHAR(16) NOT NULL DEFAULT 'v1' COMMENT '结算规则版本号',
	deadline_at DATETIME NOT NULL COMMENT '表态截止时间',
	version INT NOT NULL DEFAULT 0 COMMENT '乐观锁版本',
	created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
	updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
	PRIMARY KEY (id),
	UNIQUE KEY uk_session_no (session_no),
	KEY idx_status_deadline (status, deadline_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT '掉落分配会话'`,
	`CREATE TABLE IF NOT EXISTS loot_intent (
	id BIGINT NOT NULL AUTO_INCREMENT,
	session_no VARCHAR(64) NOT NULL COMMENT '分配会话号',
	player_id BIGINT NOT NULL COMMENT '玩家 ID',
	intent_type VARCHAR(16) NOT NULL COMMENT 'NEED/GREED/PASS',
	priority INT NOT NULL DEFAULT 0 COMMENT '需求优先级，越大越优先',
	fair_score INT NOT NULL DEFAULT 0 COMMENT '历史获取次数，越小越优先',
	created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
	PRIMARY KEY (id),
	UNIQUE KEY uk_session_player (session_no, player_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT '玩家表态记录'`,
	`CREATE TABLE IF NOT EXISTS loot_grant (
	id BIGINT NOT NULL AUTO_INCREMENT,
	grant_no VARCHAR(96) NOT NULL COMMENT '幂等键：sessionNo:playerId:lootCode',
	session_no VARCHAR(64) NOT NULL COMMENT '分配会话号',
	player_id BIGINT NOT NULL COMMENT '玩家 ID',
	loot_code VARCHAR(64) NOT NULL COMMENT '掉落物编码',
	quantity INT NOT NULL DEFAULT 1 COMMENT '发放数量',
	status VARCHAR(16) NOT NULL COMMENT 'PENDING/SUCCESS/FAILED',
	retry_count INT NOT NULL DEFAULT 0 COMMENT '补偿重试次数',
	created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
	updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
	PRIMARY KEY (id),
	UNIQUE KEY uk_grant_no (grant_no),
	KEY idx_status (status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT '发放记录，幂等键唯一'`,
}

// The LootMapper statements (sections 5.3 and 5.4).
var (
	// UpsertIntent records a claim: the unique key (session_no,
	// player_id) keeps one row; a repeat updates the intent and the
	// client's fair score, and keeps created_at.
	UpsertIntent = statement("upsertIntent", `INSERT INTO loot_intent (session_no, player_id, intent_type, priority, fair_score, created_at)
VALUES (#{sessionNo}, #{playerId}, #{intentType}, #{priority}, #{fairScore}, #{createdAt})
ON DUPLICATE KEY UPDATE
intent_type = VALUES(intent_type),
priority = VALUES(priority),
fair_score = VALUES(fair_score)`)
	// LockForSettle is the settle CAS, "the most critical SQL".
	LockForSettle = statement("lockForSettle", `UPDATE loot_session
SET status = 'SETTLING', version = version + 1
WHERE session_no = #{sessionNo}
AND status = 'CLAIMING'
AND deadline_at <= NOW()`)
	// SelectRanked is the ranking: "after the three levels the result is
	// unique, there are no ties".
	SelectRanked = statement("selectRanked", `SELECT player_id AS playerId, fair_score AS fairScore
FROM loot_intent
WHERE session_no = #{sessionNo}
AND intent_type <> 'PASS'
ORDER BY priority DESC, fair_score ASC, created_at ASC`)
	// InsertGrantIgnore writes one PENDING grant; a repeat is a no-op.
	InsertGrantIgnore = statement("insertGrantIgnore", `INSERT INTO loot_grant (grant_no, session_no, player_id, loot_code, quantity, status)
VALUES (#{grantNo}, #{sessionNo}, #{playerId}, #{lootCode}, 1, 'PENDING')
ON DUPLICATE KEY UPDATE updated_at = updated_at`)
	// MarkClosed ends a settle.
	MarkClosed = statement("markClosed", `UPDATE loot_session
SET status = 'CLOSED', allocated_quantity = #{allocated}, version = version + 1
WHERE session_no = #{sessionNo}
AND status = 'SETTLING'`)
)

// Statements the document describes but does not show, written the way its
// text says.
var (
	// CreateSession is 4.1's "create a loot_session row with the dungeon,
	// the loot code, the total quantity, the mode and the deadline",
	// opened straight to CLAIMING (the document shows no OPEN -> CLAIMING
	// statement either).
	CreateSession = statement("createSession", `INSERT INTO loot_session (session_no, dungeon_code, loot_code, total_quantity, mode, status, deadline_at)
VALUES (#{sessionNo}, #{dungeonCode}, #{lootCode}, #{totalQuantity}, 'NEED_GREED', 'CLAIMING', #{deadlineAt})`)
	// CheckIntent is submitIntent's first step, "check the session's
	// status and deadline first, then call upsertIntent": the row is read
	// and judged by the application (by its clock, LocalDateTime.now()).
	CheckIntent = statement("checkIntent", `SELECT status, deadline_at FROM loot_session WHERE session_no = #{sessionNo}`)
	// CancelSession is LootSessionStatus's transition to CANCELED (from
	// OPEN, CLAIMING or SETTLING) as one conditional UPDATE.
	CancelSession = statement("cancel", `UPDATE loot_session
SET status = 'CANCELED'
WHERE session_no = #{sessionNo}
AND status IN ('OPEN', 'CLAIMING', 'SETTLING')`)
	// SelectPending is 4.4's compensation job's scan: "periodically scan
	// loot_grant for PENDING records and re-call the grant interface".
	SelectPending = statement("selectPending", `SELECT grant_no, session_no, player_id, loot_code FROM loot_grant
WHERE status = 'PENDING'
ORDER BY id`)
	// MarkSuccess records a grant the inventory applied.
	MarkSuccess = statement("markSuccess", `UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = #{grantNo}`)
)

// Statements returns every statement, the document's first.
func Statements() []Statement {
	return []Statement{UpsertIntent, LockForSettle, SelectRanked, InsertGrantIgnore, MarkClosed, CreateSession, CheckIntent, CancelSession, SelectPending, MarkSuccess}
}
