package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
)

// docDesign is the source document's allocation service as its Java does
// it, statement for statement, on PostgreSQL and Redis: the benchmarks'
// baseline. Its schema (docSchema) is the document's schema.sql in
// PostgreSQL's dialect, its statements are LootMapper's, and claim and
// settle are submitIntent and LootSettleService.settle: one autocommitted
// statement per step, each its own round trip.
type docDesign struct {
	pool *pgxpool.Pool
	rdb  *goredis.Client
}

// docSchema is schema.sql: DATETIME is timestamp(0) (whole seconds, in
// UTC), AUTO_INCREMENT is bigserial. MySQL's ON UPDATE CURRENT_TIMESTAMP
// on updated_at has no PostgreSQL equivalent without a trigger and is left
// out, which only spares the document's design work.
const docSchema = `CREATE TABLE loot_session (
	id                 bigserial    PRIMARY KEY,
	session_no         varchar(64)  NOT NULL UNIQUE,
	dungeon_code       varchar(64)  NOT NULL,
	loot_code          varchar(64)  NOT NULL,
	total_quantity     int          NOT NULL,
	allocated_quantity int          NOT NULL DEFAULT 0,
	mode               varchar(16)  NOT NULL,
	status             varchar(16)  NOT NULL,
	rule_version       varchar(16)  NOT NULL DEFAULT 'v1',
	deadline_at        timestamp(0) NOT NULL,
	version            int          NOT NULL DEFAULT 0,
	created_at         timestamp(0) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
	updated_at         timestamp(0) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')
);
CREATE INDEX idx_status_deadline ON loot_session (status, deadline_at);
CREATE TABLE loot_intent (
	id          bigserial    PRIMARY KEY,
	session_no  varchar(64)  NOT NULL,
	player_id   bigint       NOT NULL,
	intent_type varchar(16)  NOT NULL,
	priority    int          NOT NULL DEFAULT 0,
	fair_score  int          NOT NULL DEFAULT 0,
	created_at  timestamp(0) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
	CONSTRAINT uk_session_player UNIQUE (session_no, player_id)
);
CREATE TABLE loot_grant (
	id          bigserial    PRIMARY KEY,
	grant_no    varchar(96)  NOT NULL,
	session_no  varchar(64)  NOT NULL,
	player_id   bigint       NOT NULL,
	loot_code   varchar(64)  NOT NULL,
	quantity    int          NOT NULL DEFAULT 1,
	status      varchar(16)  NOT NULL,
	retry_count int          NOT NULL DEFAULT 0,
	created_at  timestamp(0) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
	updated_at  timestamp(0) NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
	CONSTRAINT uk_grant_no UNIQUE (grant_no)
);
CREATE INDEX idx_status ON loot_grant (status);
CREATE TABLE backpack (
	request_key varchar(96) PRIMARY KEY,
	player_id   bigint      NOT NULL,
	loot_code   varchar(64) NOT NULL
);`

// The document's statements (LootMapper), MySQL's NOW() being the UTC
// wall clock here as the timestamps are.
const (
	docCheck        = `SELECT status, deadline_at FROM loot_session WHERE session_no = $1`
	docUpsertIntent = `INSERT INTO loot_intent (session_no, player_id, intent_type, priority, fair_score, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (session_no, player_id) DO UPDATE SET intent_type = EXCLUDED.intent_type,
			priority = EXCLUDED.priority, fair_score = EXCLUDED.fair_score`
	docLockForSettle = `UPDATE loot_session SET status = 'SETTLING', version = version + 1
		WHERE session_no = $1 AND status = 'CLAIMING' AND deadline_at <= (now() AT TIME ZONE 'UTC')`
	docSelectRanked = `SELECT player_id, fair_score FROM loot_intent
		WHERE session_no = $1 AND intent_type <> 'PASS' ORDER BY priority DESC, fair_score ASC, created_at ASC`
	// insertGrantIgnore: MySQL's ON DUPLICATE KEY UPDATE updated_at =
	// updated_at changes nothing, as DO NOTHING does.
	docInsertGrant = `INSERT INTO loot_grant (grant_no, session_no, player_id, loot_code, quantity, status)
		VALUES ($1, $2, $3, $4, 1, 'PENDING') ON CONFLICT (grant_no) DO NOTHING`
	docMarkClosed = `UPDATE loot_session SET status = 'CLOSED', allocated_quantity = $2, version = version + 1
		WHERE session_no = $1 AND status = 'SETTLING'`
	// The document's 4.5: the backpack service, idempotent by the request
	// key it is given, then the grant marked.
	docBackpack  = `INSERT INTO backpack (request_key, player_id, loot_code) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`
	docMarkGrant = `UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = $1`
)

// docLockPrefix and docLockMillis are application.yml's loot.settle values.
const (
	docLockPrefix = "loot:settle:lock:"
	docLockMillis = 10000
)

// claim is LootController.intent -> submitIntent: check status and
// deadline by the application's clock, then upsert (a NEED: priority 10).
// It reports whether the claim was accepted.
func (d docDesign) claim(ctx context.Context, no string, player int64, fairScore int) (bool, error) {
	var (
		status   string
		deadline time.Time
	)
	if err := d.pool.QueryRow(ctx, docCheck, no).Scan(&status, &deadline); err != nil {
		return false, err
	}
	now := time.Now().UTC().Truncate(time.Second) // LocalDateTime.now() into a DATETIME
	if status != "CLAIMING" || !now.Before(deadline) {
		return false, nil
	}
	_, err := d.pool.Exec(ctx, docUpsertIntent, no, player, "NEED", 10, fairScore, now)
	return err == nil, err
}

// docGrant is one grant the document's settle inserted.
type docGrant struct {
	no     string
	player int64
}

// settle is LootSettleService.settle: SET NX PX; lockForSettle;
// selectRanked; insertGrantIgnore per winner; markClosed; then GET and, if
// still its token, DEL. It returns the grants it inserted (nil when the
// lock or the CAS was lost).
func (d docDesign) settle(ctx context.Context, no, lootCode string, quantity int) ([]docGrant, error) {
	key := docLockPrefix + no
	var tb [16]byte
	_, _ = rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	locked, err := d.rdb.SetNX(ctx, key, token, docLockMillis*time.Millisecond).Result()
	if err != nil || !locked {
		return nil, err
	}
	defer func() {
		if cur, err := d.rdb.Get(ctx, key).Result(); err == nil && cur == token {
			d.rdb.Del(ctx, key)
		}
	}()
	tag, err := d.pool.Exec(ctx, docLockForSettle, no)
	if err != nil || tag.RowsAffected() == 0 {
		return nil, err
	}
	rows, err := d.pool.Query(ctx, docSelectRanked, no)
	if err != nil {
		return nil, err
	}
	var ranked []int64
	for rows.Next() {
		var p int64
		var score int
		if err := rows.Scan(&p, &score); err != nil {
			rows.Close()
			return nil, err
		}
		ranked = append(ranked, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	grants := make([]docGrant, min(quantity, len(ranked)))
	for i := range grants {
		p := ranked[i]
		grants[i] = docGrant{fmt.Sprintf("%s:%d:%s", no, p, lootCode), p}
		if _, err := d.pool.Exec(ctx, docInsertGrant, grants[i].no, no, p, lootCode); err != nil {
			return nil, err
		}
	}
	if _, err := d.pool.Exec(ctx, docMarkClosed, no, len(grants)); err != nil {
		return nil, err
	}
	return grants, nil
}

// deliver is the document's 4.5 for one grant: the backpack call with the
// grant number as its key, then the grant marked SUCCESS.
func (d docDesign) deliver(ctx context.Context, g docGrant, lootCode string) error {
	if _, err := d.pool.Exec(ctx, docBackpack, g.no, g.player, lootCode); err != nil {
		return err
	}
	_, err := d.pool.Exec(ctx, docMarkGrant, g.no)
	return err
}
