package mysql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// BenchmarkDeliverStatement measures the server's CPU for the delivery
// transaction alone, settleQuantity grants a call: impl=multi is the
// Inventory's DeliverBatch (deliverTrip's multi-statement: START
// TRANSACTION, SELECT ... FOR UPDATE, UPDATE, INSERT ... ON DUPLICATE KEY
// UPDATE, SELECT, COMMIT, parsed on every call); impl=routine and
// impl=loop are the same transaction as a routine taking the numbers as
// JSON (deliverProbes), so parsed once per connection.
//
// Measured, five rounds each impl in turn (one server each), MariaDB 10.11,
// 2 cores shared with other sessions at load average 5-22:
//
//	for r in 1 2 3 4 5; do for impl in multi routine loop; do
//	  ONCEPROOF_REQUIRE_SERVICES=1 go test ./ref/loot/mysql -run '^$' -bench "BenchmarkDeliverStatement/impl=$impl/" -benchtime 5000x
//	done; done
//
//	db-cpu-us/op   multi                    routine                  loop
//	conc=1         256 234 230 258 232 (242) 188 214 192 228 220 (208) 266 236 226 254 210 (238)
//	conc=16        312 298 286 290 306 (298) 326 292 294 320 328 (312) 326 316 364 308 330 (329)
//
// The routine costs the server 0.86x the multi-statement's at conc 1
// (about 35 us of the 900-1100 us a settle through delivery costs it, so
// 3%) and 1.05x at conc 16; the loop 0.98x and 1.10x. Not worth a routine
// in Schema: besides, the JSON_TABLE join's plan on a small loot_grant is
// a scan of uk_grant_no (EXPLAIN), which under FOR UPDATE locks every
// grant, where the IN list's range scan locks only the batch's. So
// DeliverBatch stays a multi-statement.
func BenchmarkDeliverStatement(b *testing.B) {
	for _, impl := range []string{"multi", "routine", "loop"} {
		for _, conc := range []int{1, 16} {
			b.Run(fmt.Sprintf("impl=%s/conc=%d", impl, conc), func(b *testing.B) { benchDeliverStatement(b, impl, conc) })
		}
	}
}

func benchDeliverStatement(b *testing.B, impl string, conc int) {
	ctx := context.Background()
	dsn := testserver.MariaDB(b)
	var sent writes
	store, err := mysql.Open(ctx, dsn, mysql.Options{Config: sent.count})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	raw := store.DB()
	released(b, raw, dsn)
	if r, ok := deliverProbes[impl]; ok {
		if _, err := raw.ExecContext(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO loot_grant
		(grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, lease_until, created_at)
		SELECT CONCAT('S-', seq DIV ?, ':', seq MOD ?), CONCAT('S-', seq DIV ?), seq MOD ? + 1, 'L', 1, seq MOD ? + 1, 'PENDING', NOW(6), NOW(6)
		FROM seq_0_to_`+fmt.Sprint(b.N*settleQuantity-1),
		settleQuantity, settleQuantity, settleQuantity, settleQuantity, settleQuantity); err != nil {
		b.Fatal(err)
	}
	raw.SetMaxIdleConns(conc)
	warm(b, raw, conc)
	inv := store.Inventory()
	do := func(i int) error {
		gs := make([]loot.Grant, settleQuantity)
		for k := range gs {
			gs[k].No = fmt.Sprintf("S-%d:%d", i, k)
		}
		if impl == "multi" {
			return inv.DeliverBatch(ctx, gs)
		}
		js, _ := json.Marshal(nos(gs))
		rows, err := raw.QueryContext(ctx, "CALL loot_deliver_"+impl+"(?)", string(js))
		if err != nil {
			return err
		}
		n := 0 // the grants read back, in one result set or one each
		for more := true; more; more = rows.NextResultSet() {
			for rows.Next() {
				n++
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if n != settleQuantity {
			return fmt.Errorf("%d grants back, want %d", n, settleQuantity)
		}
		return nil
	}
	runOps(b, conc, &sent, do)
}

// deliverProbes are the routines the impls other than multi CALL
// (loot_deliver_<impl>), each DeliverBatch's transaction for the grant
// numbers p_nos, a JSON array: routine joins the array as a table
// (JSON_TABLE) in each statement, as loot_record_v3 does its grants;
// loop takes one number at a time, each statement a unique-key lookup.
var deliverProbes = map[string]string{"routine": `CREATE PROCEDURE IF NOT EXISTS loot_deliver_routine(
	p_nos LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin)
SQL SECURITY INVOKER
BEGIN
	DECLARE v_found BIGINT;
	START TRANSACTION;
	SELECT COUNT(*) INTO v_found FROM JSON_TABLE(p_nos, '$[*]' COLUMNS (
			grant_no VARCHAR(160) CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$' ERROR ON EMPTY ERROR ON ERROR)) j
		JOIN loot_grant g ON g.grant_no = j.grant_no FOR UPDATE;
	IF v_found = JSON_LENGTH(p_nos) THEN
		UPDATE JSON_TABLE(p_nos, '$[*]' COLUMNS (
				grant_no VARCHAR(160) CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$' ERROR ON EMPTY ERROR ON ERROR)) j
			JOIN loot_grant g ON g.grant_no = j.grant_no
		SET g.status = 'SUCCESS' WHERE g.status = 'PENDING';
		INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, delivered_at)
		SELECT g.grant_no, g.player_id, g.loot_code, g.quantity, NOW(6)
		FROM JSON_TABLE(p_nos, '$[*]' COLUMNS (
				grant_no VARCHAR(160) CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$' ERROR ON EMPTY ERROR ON ERROR)) j
			JOIN loot_grant g ON g.grant_no = j.grant_no
		ON DUPLICATE KEY UPDATE loot_inventory.id = loot_inventory.id;
	END IF;
	SELECT v_found, g.grant_no, g.session_no, g.player_id, g.loot_code, g.quantity, g.grant_rank, g.status, g.retry_count, g.lease_until
	FROM JSON_TABLE(p_nos, '$[*]' COLUMNS (
			grant_no VARCHAR(160) CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$' ERROR ON EMPTY ERROR ON ERROR)) j
		JOIN loot_grant g ON g.grant_no = j.grant_no;
	COMMIT;
END`,
	"loop": `CREATE PROCEDURE IF NOT EXISTS loot_deliver_loop(
	p_nos LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin)
SQL SECURITY INVOKER
BEGIN
	DECLARE v_n BIGINT DEFAULT JSON_LENGTH(p_nos);
	DECLARE v_i BIGINT DEFAULT 0;
	DECLARE v_found BIGINT DEFAULT 0;
	DECLARE v_no VARCHAR(160) CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin;
	START TRANSACTION;
	WHILE v_i < v_n DO
		SET v_no = JSON_VALUE(p_nos, CONCAT('$[', v_i, ']'));
		SELECT v_found + COUNT(*) INTO v_found FROM loot_grant WHERE grant_no = v_no FOR UPDATE;
		SET v_i = v_i + 1;
	END WHILE;
	SET v_i = 0;
	WHILE v_i < v_n DO
		SET v_no = JSON_VALUE(p_nos, CONCAT('$[', v_i, ']'));
		IF v_found = v_n THEN
			UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = v_no AND status = 'PENDING';
			INSERT INTO loot_inventory (grant_no, player_id, loot_code, quantity, delivered_at)
			SELECT grant_no, player_id, loot_code, quantity, NOW(6) FROM loot_grant WHERE grant_no = v_no
			ON DUPLICATE KEY UPDATE loot_inventory.id = loot_inventory.id;
		END IF;
		SELECT v_found, grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, retry_count, lease_until
		FROM loot_grant WHERE grant_no = v_no;
		SET v_i = v_i + 1;
	END WHILE;
	COMMIT;
END`}
