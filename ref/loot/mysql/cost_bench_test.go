package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// BenchmarkSettleCost is where the server's CPU per single-path settle
// (BeginSettle, loot.Decide, RecordGrants: a CALL each) goes: the same
// settles on one connection each against databases of one server, one per
// variant of the schema, each variant changing one thing of Schema after
// Open (an index dropped, a routine's body replaced under its name, which
// Open has checked already), in interleaved rounds of oneConnRound settles
// as BenchmarkLootOneConn's, the document's settle among them. What to
// read is each variant's CPU per settle over base's (x-base), measured in
// one run; a variant that is not Schema's is a measurement, not a design.
// Its phases are reported apart too (begin, record).
//
//	ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkSettleCost -benchtime 3000x ./ref/loot/mysql
//
// Measured on loot_begin_settle_v1 and loot_record_v1 (main before v2),
// 1000x and 3000x, load average 3-11, x-base per run (base 520-630 us of
// server CPU a settle, doc 0.50-0.60x of it):
//
//	both member lists read as a constant      0.83 0.78 0.83 0.80 0.73  (the GROUP_CONCAT subquery: 50-70 us a read)
//	status indexes dropped (both + grant's)   0.92 0.86 0.93 0.88 0.86
//	idx_status_settle_until dropped alone     1.00 0.96 1.00
//	grant's idx_status_lease, idx_session_rank dropped 0.97 1.07 0.97
//	no audit row                              0.90 0.89 1.00 0.97
//	no CHECK constraints                      1.03 0.98 1.06
//	read backs without LOCK IN SHARE MODE     1.02 1.01 1.04
//	VARCHAR(160) parameters for TEXT          1.02 0.98 1.03
//	SQL SECURITY DEFINER                      1.03 0.99 1.00
//	no START TRANSACTION/COMMIT               1.04 0.98 1.02
//	members as a SELECT of their own          0.93 1.04
//	members joined into the read back         0.99
//	GROUP_CONCAT without ORDER BY             0.97 1.01
//	begin's members with its claims (v2)      0.89 0.88
//
// So the server's CPU goes to statements (each is optimized at every
// execution, a routine's too: perf shows JOIN::optimize and the range
// analysis at 15% of the server's samples, the syscalls sending result
// sets 9%), and to the member lists' temporary tables: v2 reads begin's
// members in its claims' statement, and names the UPDATE's index. On v2,
// begin's phase in us of server CPU a settle, three runs (raw-* are bare
// CALLs, not the store's):
//
//	v2 (base)                               197 190 197   raw 190 200 187
//	v1's members subquery and claims read   223 233 210 220 240
//	v2 without FORCE INDEX (raw)            260 240 263
//	v2's two reads as one join (raw)        227 227 203 217 207
//
// and record's (loot_record_v1, unchanged), 330-343 base:
//
//	member list a constant                  250 283 240 293 267 247
//	members as a SELECT of their own        340 380 327
//	its UPDATE with FORCE INDEX             353 347 327
//
// The member list is what is left to cut in record (50-90 us), and each
// other way of reading it costs a statement or a join as much.
//
// loot_member_list (one row per session, the list as Open wrote it,
// joined to the read back: loot_record_v2) cuts part of it. On a slower
// machine (a Firecracker VM: base 1200 us of server CPU a settle), two
// runs, record's phase and x-base:
//
//	loot_record_v2 (base)                   743 720
//	no-member-lists (GROUP_CONCAT fallback) 790 737   x-base 1.03 1.04
//	record-const-members                    640 627   x-base 0.88 0.94
//
// So the read back itself was next: on v2, a won close answered with its
// won flag alone (the session then known to the Store: settling.go) took
// 0.86x and 0.88x of base's server CPU a settle in two runs (record's
// phase 183 us against 243, then 320 against 400), and with the session
// row read without its member list or lock 0.90x: loot_record_v3 answers
// with the flag. Variant record-won-read-back is v3 with v2's read back.
func BenchmarkSettleCost(b *testing.B) {
	ctx := context.Background()
	type variant struct {
		name string
		// alter changes the store's database after Open, after the
		// sessions are written.
		alter, after func(db *sql.DB) error
		// raw: the begin phase is the routine's CALL alone, its result
		// sets drained unread, and there is no record phase (for a body
		// whose sets the store would not read).
		raw bool
	}
	variants := []variant{
		{name: "base"},
		// Sessions opened before loot_member_list: every list read is the
		// GROUP_CONCAT of loot_member (the reads before the table).
		{name: "no-member-lists", after: execAll("DELETE FROM loot_member_list")},
		{name: "begin-members-subquery", alter: replaceRoutine("loot_begin_settle_v2", func(body string) string {
			body = strings.Replace(body, "NULL, NOW(6)", membersSubquery+", NOW(6)", 1)
			return strings.Replace(body, "\tSELECT m.player_id, c.intent_type, c.created_at\n\tFROM loot_member m LEFT JOIN loot_intent c ON c.session_no = m.session_no AND c.player_id = m.player_id\n\tWHERE m.session_no = p_session ORDER BY m.player_id;\n",
				"\tIF v_won = 1 THEN\n\t\tSELECT player_id, intent_type, created_at FROM loot_intent WHERE session_no = p_session ORDER BY player_id;\n\tEND IF;\n", 1)
		})},
		// loot_record_v2's answer to a close that won: the session read
		// back, as the refused branch reads it.
		{name: "record-won-read-back", alter: replaceRoutine("loot_record_v3", func(body string) string {
			els := body[strings.Index(body, "\tELSE\n")+len("\tELSE\n") : strings.Index(body, "\tEND IF;\n\tCOMMIT;")]
			return strings.Replace(body, "\t\tSELECT v_won;\n", els, 1)
		})},
		// loot_record_v3's UPDATE without its index named: the optimizer
		// then ranges over idx_status_deadline's SETTLING entries.
		{name: "record-no-hint", alter: replaceRoutine("loot_record_v3", func(body string) string {
			return strings.Replace(body, "UPDATE loot_session FORCE INDEX (uk_session_no) SET", "UPDATE loot_session SET", 1)
		})},
		{name: "raw-begin", raw: true},
		{name: "raw-begin-no-hint", raw: true, alter: replaceRoutine("loot_begin_settle_v2", func(body string) string {
			return strings.Replace(body, "UPDATE loot_session FORCE INDEX (uk_session_no)\n", "UPDATE loot_session\n", 1)
		})},
	}
	// A side is two phases, each timed alone in a round: BeginSettle of
	// the round's sessions, then their decisions recorded.
	type side struct{ begin, record func(i int) error }
	sides := make([]side, 0, len(variants)+1)
	for _, v := range variants {
		store, err := mysql.Open(ctx, testserver.MariaDB(b), mysql.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { store.Close() })
		store.DB().SetMaxOpenConns(1)
		if v.alter != nil {
			if err := v.alter(store.DB()); err != nil {
				b.Fatalf("variant %s: %v", v.name, err)
			}
		}
		bulkSessions(b, store.DB(), "ref", "S-", b.N, settleTeam, settleTeam, -time.Second)
		if v.after != nil {
			if err := v.after(store.DB()); err != nil {
				b.Fatalf("variant %s: %v", v.name, err)
			}
		}
		if v.raw {
			sides = append(sides, side{
				begin: func(i int) error {
					rows, err := store.DB().QueryContext(ctx, "CALL loot_begin_settle_v2(?, ?)", fmt.Sprintf("S-%d", i), int64(time.Minute/time.Microsecond))
					if err != nil {
						return err
					}
					for rows.Next() || rows.NextResultSet() {
					}
					return rows.Close()
				},
				record: func(int) error { return nil },
			})
			continue
		}
		frozen := make([]loot.Frozen, b.N)
		sides = append(sides, side{
			begin: func(i int) (err error) {
				frozen[i], err = store.BeginSettle(ctx, fmt.Sprintf("S-%d", i), time.Minute)
				return err
			},
			record: func(i int) error {
				d, err := decideNew(frozen[i])
				if err == nil {
					_, err = store.RecordGrants(ctx, d)
				}
				return err
			},
		})
	}
	raw, doc := docOneConn(b)
	bulkSessions(b, raw, "doc", "S-", b.N, settleTeam, settleTeam, -time.Second)
	sides = append(sides, side{
		begin:  func(i int) error { return docSettle(ctx, doc, fmt.Sprintf("S-%d", i)) },
		record: func(int) error { return nil },
	})
	variants = append(variants, variant{name: "doc"})

	cpu := make([][2]time.Duration, len(sides))
	b.ResetTimer()
	for lo := 0; lo < b.N; lo += oneConnRound {
		for k, sd := range sides {
			for ph, do := range []func(int) error{sd.begin, sd.record} {
				c0 := serverCPU(b)
				for i := lo; i < min(lo+oneConnRound, b.N); i++ {
					if err := do(i); err != nil {
						b.Fatalf("variant %s: %v (go test ./ref/loot/mysql -run '^$' -bench 'BenchmarkSettleCost$' -benchtime %dx)", variants[k].name, err, b.N)
					}
				}
				cpu[k][ph] += serverCPU(b) - c0
			}
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	base := us(cpu[0][0] + cpu[0][1])
	for k, v := range variants {
		all := us(cpu[k][0] + cpu[k][1])
		b.ReportMetric(all, v.name+"-cpu-us/op")
		b.ReportMetric(all/base, v.name+"-x-base")
		if v.name != "doc" {
			b.ReportMetric(us(cpu[k][0]), v.name+"-begin-cpu-us/op")
			b.ReportMetric(us(cpu[k][1]), v.name+"-record-cpu-us/op")
		}
	}
}

// execAll is an alter that runs stmts in turn.
func execAll(stmts ...string) func(db *sql.DB) error {
	return func(db *sql.DB) error {
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}
}

// dropChecks drops every CHECK constraint of the database's tables.
func dropChecks(db *sql.DB) error {
	rows, err := db.Query(`SELECT table_name, constraint_name FROM information_schema.check_constraints
		WHERE constraint_schema = DATABASE()`)
	if err != nil {
		return err
	}
	var stmts []string
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return err
		}
		stmts = append(stmts, "ALTER TABLE "+t+" DROP CONSTRAINT "+c)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(stmts) == 0 {
		return fmt.Errorf("no CHECK constraints found")
	}
	return execAll(stmts...)(db)
}

// replaceRoutine is an alter that replaces Schema's routine name by
// edit(its CREATE statement), under the same name.
func replaceRoutine(name string, edit func(string) string) func(db *sql.DB) error {
	return func(db *sql.DB) error {
		head := "CREATE PROCEDURE IF NOT EXISTS " + name + "("
		i := strings.Index(mysql.Schema, head)
		if i < 0 {
			return fmt.Errorf("Schema has no %s", name)
		}
		stmt := mysql.Schema[i : i+strings.Index(mysql.Schema[i:], "END;;")+len("END")]
		edited := edit(stmt)
		if edited == stmt {
			return fmt.Errorf("the edit of %s changed nothing", name)
		}
		return execAll("DROP PROCEDURE "+name, edited)(db)
	}
}

// splice is body with its text from the first from up to the first to
// after it (an insertion before from when the two are equal) replaced by
// with. It panics when either is missing, so a variant of a routine whose
// text changed fails instead of measuring the routine unedited.
func splice(body, from, to, with string) string {
	i := strings.Index(body, from)
	j := -1
	if i >= 0 {
		j = strings.Index(body[i:], to)
	}
	if j < 0 {
		panic(fmt.Sprintf("splice: the routine has no %q followed by %q", from, to))
	}
	return body[:i] + with + body[i+j:]
}

const membersSubquery = "(SELECT GROUP_CONCAT(m.player_id ORDER BY m.player_id SEPARATOR ',') FROM loot_member m WHERE m.session_no = s.session_no)"

// BenchmarkClaimCost is BenchmarkSettleCost for Store.Claim's CALL of
// loot_claim_v1, one fresh (session, player) claim each, raw CALLs on one
// connection per variant, the document's claim among them. Measured, two
// runs at 6000x, server CPU per claim: base 78 and 85 us, loot_claim_v1
// with FORCE INDEX (uk_session_no) on its session 95 and 100 (1.21x,
// 1.18x: so it has none), doc 93 and 102.
//
//	ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkClaimCost -benchtime 6000x ./ref/loot/mysql
func BenchmarkClaimCost(b *testing.B) {
	ctx := context.Background()
	variants := []struct {
		name  string
		alter func(db *sql.DB) error
	}{
		{name: "base"},
		{name: "force-index", alter: replaceRoutine("loot_claim_v1", func(body string) string {
			return strings.Replace(body, "FROM loot_session s JOIN", "FROM loot_session s FORCE INDEX (uk_session_no) JOIN", 1)
		})},
	}
	sessions := (b.N + claimTeam - 1) / claimTeam
	var sides []func(i int) error
	for _, v := range variants {
		store, err := mysql.Open(ctx, testserver.MariaDB(b), mysql.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { store.Close() })
		db := store.DB()
		db.SetMaxOpenConns(1)
		if v.alter != nil {
			if err := v.alter(db); err != nil {
				b.Fatalf("variant %s: %v", v.name, err)
			}
		}
		bulkSessions(b, db, "ref", "S-", sessions, claimTeam, 0, time.Hour)
		sides = append(sides, func(i int) error {
			rows, err := db.QueryContext(ctx, "CALL loot_claim_v1(?, ?, 'NEED', 10)", fmt.Sprintf("S-%d", i/claimTeam), i%claimTeam+1)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() || rows.NextResultSet() {
				n++
			}
			if err := rows.Close(); err != nil || n != 1 {
				return fmt.Errorf("claim %d: %d rows, %v", i, n, err)
			}
			return nil
		})
	}
	raw, doc := docOneConn(b)
	bulkSessions(b, raw, "doc", "S-", sessions, claimTeam, 0, time.Hour)
	sides = append(sides, func(i int) error {
		return docClaim(ctx, doc, fmt.Sprintf("S-%d", i/claimTeam), loot.PlayerID(i%claimTeam+1))
	})
	names := []string{variants[0].name, variants[1].name, "doc"}
	cpu := make([]time.Duration, len(sides))
	b.ResetTimer()
	for lo := 0; lo < b.N; lo += oneConnRound {
		for k, do := range sides {
			c0 := serverCPU(b)
			for i := lo; i < min(lo+oneConnRound, b.N); i++ {
				if err := do(i); err != nil {
					b.Fatalf("variant %s: %v (go test ./ref/loot/mysql -run '^$' -bench 'BenchmarkClaimCost$' -benchtime %dx)", names[k], err, b.N)
				}
			}
			cpu[k] += serverCPU(b) - c0
		}
	}
	b.StopTimer()
	for k, name := range names {
		us := float64(cpu[k].Microseconds()) / float64(b.N)
		b.ReportMetric(us, name+"-cpu-us/op")
		b.ReportMetric(us/(float64(cpu[0].Microseconds())/float64(b.N)), name+"-x-base")
	}
}

// docOneConn opens the document's schema on a fresh database of its own,
// on one connection (the cost benchmarks' doc side), with the driver
// options the document's DAO uses.
func docOneConn(b *testing.B) (*sql.DB, *docsql.DB) {
	cfg, err := gomysql.ParseDSN(testserver.MariaDB(b) + "?parseTime=true&loc=UTC&time_zone=%27%2B00:00%27&interpolateParams=true")
	if err != nil {
		b.Fatal(err)
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		b.Fatal(err)
	}
	raw := sql.OpenDB(conn)
	b.Cleanup(func() { raw.Close() })
	raw.SetMaxOpenConns(1)
	doc := docsql.New(raw)
	if err := doc.CreateSchema(context.Background()); err != nil {
		b.Fatal(err)
	}
	return raw, doc
}

// BenchmarkSettleBatchCost is the server's CPU per batched CALL of
// BeginSettle and of RecordGrants (loot_begin_settle_batch_v3,
// loot_record_batch_v4) through the Store, 6000 sessions in batches of
// each size on one connection, so a CALL's fixed cost and its cost a
// session can be told apart (b.N is not used: one pass is the
// measurement), for Schema's routines (base) and variants of them that
// are measurements, not designs. Measured, two runs, us a CALL (sizes 2,
// 5, 20):
//
//	base             begin  507 510   617 692  1267 1200   (fixed ~430, ~40 a session)
//	                 record 547 517   850 942  2700 2433   (fixed ~310, ~110 a session)
//	force-index      begin  500 510   583 550  1000 1267
//	                 record 507 560   783 792  2167 2100
//	varchar-columns  begin  483 467   600 667  1067 1367
//	                 record 533 530   833 917  2333 2033
//
// So at conc 16, batches of ~5 (BenchmarkLoot op=settle impl=ref-batched:
// 290-380 us of server CPU a settle), ~150 us of a settle is the two
// CALLs' fixed cost; neither naming the session table's index in the
// batch statements (force-index: FORCE INDEX (uk_session_no) on every
// join of loot_session) nor VARCHAR(160) JSON_TABLE columns for TEXT
// (varchar-columns) moves it beyond the runs' spread. The record stage,
// the busier at conc 16 (86-94% of the time in a CALL against 77-86% for
// begin, a local count), is what bounds the settles/s there.
//
// Nor is the UPDATE over JSON_TABLE's way of running the cost
// (BenchmarkBeginBatchStatements puts ~280 us of a begin CALL of 5 in
// it): loop-updates, each routine's UPDATE a loop of single-row UPDATEs
// on uk_session_no, cost as much or more, two runs (sizes 2, 5, 20):
//
//	base          begin  543 500   758 767  1367 1700
//	              record 620 567  1067 1075  2700 3633
//	loop-updates  begin  593 533   800 675  1833 1800
//	              record 707 663  1250 1075  3933 3567
//
// So the UPDATE costs its rows' writes (the session row and its two
// status indexes). The record CALL cut after each statement (each
// answering with the batch's length, as a CALL that closed every session
// does), three runs at sizes 5 and 20:
//
//	record-answer-count   808 792 950   2300 2233 2267   (the whole CALL)
//	record-audit+grants   683 692 700   1933 1733 2167   (no UPDATE)
//	record-audit          475 458 475   1367 1100 1233   (the audit rows alone)
//
// So of record's ~110 us a session the audit row's INSERT (its session
// locked, its snapshot unescaped from the array) is ~50, the grants' ~30,
// the UPDATE ~20-30; of its fixed ~310 the transaction and the CALL are
// ~50 (BenchmarkBeginBatchStatements' transaction-only) and each
// statement the rest. A variant without the snapshot (a constant in its
// place, not kept) saved record 60-175 us a CALL at size 5 and 30-270
// at size 20, two runs: the snapshot is not what a session costs.
//
//	ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkSettleBatchCost -benchtime 1x ./ref/loot/mysql
func BenchmarkSettleBatchCost(b *testing.B) {
	ctx := context.Background()
	varcharColumns := func(body string) string {
		return regexp.MustCompile(`(\w+ +)TEXT( +PATH)`).ReplaceAllString(body, "${1}VARCHAR(160)${2}")
	}
	forceIndex := func(body string) string {
		return strings.ReplaceAll(body, "STRAIGHT_JOIN loot_session s ON", "STRAIGHT_JOIN loot_session s FORCE INDEX (uk_session_no) ON")
	}
	// loopUpdates replaces a batch routine's multi-table UPDATE over
	// JSON_TABLE (from its head to the statement after it) with a loop of
	// single-row UPDATEs on uk_session_no, one a session of the batch.
	loopUpdates := func(head, next, declare, loop string) func(string) string {
		return func(body string) string {
			body = splice(body, head, next, loop)
			return splice(body, "\tSTART TRANSACTION;", "\tSTART TRANSACTION;", declare)
		}
	}
	const loopDeclare = `	DECLARE v_i, v_n BIGINT DEFAULT 0;
	DECLARE v_no VARCHAR(64) CHARSET utf8mb4 COLLATE utf8mb4_nopad_bin;
	DECLARE v_x, v_y BIGINT;
`
	beginLoop := loopUpdates("\tUPDATE JSON_TABLE(p_batch", "\tSELECT s.fence = f.fence + 1", loopDeclare, `	SET v_n = JSON_LENGTH(p_batch);
	WHILE v_i < v_n DO
		SET v_no = JSON_VALUE(p_batch, CONCAT('$[', v_i, '][0]'));
		SET v_x = JSON_VALUE(p_batch, CONCAT('$[', v_i, '][1]'));
		UPDATE loot_session s FORCE INDEX (uk_session_no)
		SET s.status = 'SETTLING', s.fence = s.fence + 1, s.settle_until = NOW(6) + INTERVAL v_x MICROSECOND
		WHERE s.session_no = v_no AND ((s.status = 'CLAIMING' AND s.deadline_at <= NOW(6)) OR
			(s.status = 'SETTLING' AND s.settle_until <= NOW(6)));
		SET v_i = v_i + 1;
	END WHILE;
`)
	recordLoop := loopUpdates("\tUPDATE JSON_TABLE(p_batch", "\tIF v_closed = JSON_LENGTH(p_batch)", loopDeclare, `	SET v_n = JSON_LENGTH(p_batch), v_closed = 0;
	WHILE v_i < v_n DO
		SET v_no = JSON_VALUE(p_batch, CONCAT('$[', v_i, '][0]'));
		SET v_x = JSON_VALUE(p_batch, CONCAT('$[', v_i, '][1]'));
		SET v_y = JSON_VALUE(p_batch, CONCAT('$[', v_i, '][2]'));
		UPDATE loot_session s FORCE INDEX (uk_session_no)
		SET s.status = 'CLOSED', s.allocated_quantity = v_y
		WHERE s.session_no = v_no AND s.status = 'SETTLING' AND s.fence = v_x
			AND EXISTS (SELECT 1 FROM loot_audit a WHERE a.session_no = v_no);
		SET v_closed = v_closed + ROW_COUNT();
		SET v_i = v_i + 1;
	END WHILE;
`)
	recordCut := func(grants, update bool) func(string) string {
		return func(body string) string {
			body = splice(body, "\tIF v_closed = JSON_LENGTH(p_batch) THEN", "\tCOMMIT;", "\tSELECT JSON_LENGTH(p_batch);\n")
			if !update {
				body = splice(body, "\tUPDATE JSON_TABLE(p_batch", "\tSELECT JSON_LENGTH(p_batch);", "")
			}
			if !grants {
				body = splice(body, "\tINSERT INTO loot_grant", "\tSELECT JSON_LENGTH(p_batch);", "")
			}
			return body
		}
	}
	variants := []struct {
		name  string
		alter func(db *sql.DB) error
	}{
		{name: "base"},
		{name: "loop-updates", alter: func(db *sql.DB) error {
			if err := replaceRoutine("loot_begin_settle_batch_v3", beginLoop)(db); err != nil {
				return err
			}
			return replaceRoutine("loot_record_batch_v4", recordLoop)(db)
		}},
		{name: "record-answer-count", alter: replaceRoutine("loot_record_batch_v4", recordCut(true, true))},
		{name: "record-audit+grants", alter: replaceRoutine("loot_record_batch_v4", recordCut(true, false))},
		{name: "record-audit", alter: replaceRoutine("loot_record_batch_v4", recordCut(false, false))},
		{name: "force-index", alter: func(db *sql.DB) error {
			if err := replaceRoutine("loot_begin_settle_batch_v3", forceIndex)(db); err != nil {
				return err
			}
			return replaceRoutine("loot_record_batch_v4", forceIndex)(db)
		}},
		{name: "varchar-columns", alter: func(db *sql.DB) error {
			if err := replaceRoutine("loot_begin_settle_batch_v3", varcharColumns)(db); err != nil {
				return err
			}
			return replaceRoutine("loot_record_batch_v4", varcharColumns)(db)
		}},
	}
	for _, v := range variants {
		for _, size := range []int{2, 5, 20} {
			b.Run(fmt.Sprintf("variant=%s/size=%d", v.name, size), func(b *testing.B) {
				store, err := mysql.Open(ctx, testserver.MariaDB(b), mysql.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer store.Close()
				store.DB().SetMaxOpenConns(1)
				if v.alter != nil {
					if err := v.alter(store.DB()); err != nil {
						b.Fatal(err)
					}
				}
				const n = 6000 // 300 batches of 20, 1200 of 5, 3000 of 2
				bulkSessions(b, store.DB(), "ref", "S-", n, settleTeam, settleTeam, -time.Second)
				nos := make([]string, n)
				for i := range nos {
					nos[i] = fmt.Sprintf("S-%d", i)
				}
				// Rounds of 400 sessions, begun then recorded: the Store
				// keeps what a won BeginSettle read until its RecordGrants
				// (settling.go), up to 1024 sessions, past which a record
				// would read its session again and cost a round trip more.
				const round = 400
				var begin, record time.Duration
				for lo := 0; lo < n; lo += round {
					var fzs []loot.Frozen
					c0 := serverCPU(b)
					for i := lo; i < lo+round; i += size {
						got, errs := store.BeginSettleBatch(ctx, nos[i:i+size], time.Minute)
						for _, e := range errs {
							if e != nil {
								b.Fatalf("%v (%s)", e, reproduceBatchCost)
							}
						}
						fzs = append(fzs, got...)
					}
					begin += serverCPU(b) - c0
					ds := make([]loot.Decision, len(fzs))
					for i, fz := range fzs {
						if ds[i], err = decideNew(fz); err != nil {
							b.Fatal(err)
						}
					}
					c0 = serverCPU(b)
					for i := 0; i < len(ds); i += size {
						_, errs := store.RecordGrantsBatch(ctx, ds[i:i+size])
						for _, e := range errs {
							if e != nil {
								b.Fatalf("%v (%s)", e, reproduceBatchCost)
							}
						}
					}
					record += serverCPU(b) - c0
				}
				b.ReportMetric(float64(begin.Microseconds())/float64(n/size), "begin-us/call")
				b.ReportMetric(float64(record.Microseconds())/float64(n/size), "record-us/call")
			})
		}
	}
}

const reproduceBatchCost = "ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkSettleBatchCost -benchtime 1x ./ref/loot/mysql"

// BenchmarkBeginBatchStatements is where loot_begin_settle_batch_v3's
// fixed cost goes: raw CALLs of batches of 5 on one connection, each
// variant the routine cut after one more of its statements (the fences
// read FOR UPDATE, the UPDATE, the read back, the claims: the whole
// routine), and one with its transaction alone, so each statement's
// server CPU a CALL is the difference of two neighbours. The cut bodies
// are measurements, not designs (their result sets are drained unread).
// Measured three times while a CI run shared the machine (so the spread
// is wide), us a CALL: transaction alone 42 33 50, the UPDATE alone 292
// 300 375, with the fences before it 467 475 358, with the read back 667
// 542 458, whole 850 683 583; twice on a quiet machine: 50 50, 333 325,
// 367 375, 417 475, 625 717. So the UPDATE (~280) and the claims' read
// (~200, 25 rows each found by uk_session_player and then its clustered
// row) are the largest shares. The UPDATE's is its rows' writes, not
// the temporary table MariaDB fills for a multi-table UPDATE
// (BenchmarkSettleBatchCost's loop-updates costs as much). Reading the
// claims in the read back's statement (merged-claims: a LEFT JOIN of
// loot_intent, each claim a row with its session's columns) saved 17-83
// us a CALL in three runs (525 583 558 against whole's 608 642 575), ~2%
// of a settle's CPU at conc 16, and was not adopted: a new routine and
// five times the session columns for the client to read, for the begin
// stage, which is not the one that bounds conc 16.
//
//	ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkBeginBatchStatements -benchtime 1x ./ref/loot/mysql
func BenchmarkBeginBatchStatements(b *testing.B) {
	ctx := context.Background()
	heads := []string{"\tSELECT COALESCE(JSON_ARRAYAGG", "\tUPDATE JSON_TABLE(p_batch", "\tSELECT s.fence = f.fence + 1", "\tSELECT c.session_no, c.player_id", "\tCOMMIT;"}
	// cut keeps the routine's statements before heads[k] (after the
	// first `from` of them) and its COMMIT.
	cut := func(from, k int) func(string) string {
		return func(body string) string {
			return splice(splice(body, heads[k], heads[4], ""), heads[0], heads[from], "")
		}
	}
	variants := []struct {
		name     string
		from, to int
	}{
		{"transaction-only", 4, 4},
		{"update-only", 1, 2},
		{"fences+update", 0, 2},
		{"fences+update+read-back", 0, 3},
		{"whole", 0, 4},
		{"merged-claims", 0, 4},
	}
	mergedRead := "\tSELECT s.fence = f.fence + 1, " + mysql.SessionColumns + `, NOW(6), c.player_id, c.intent_type, c.created_at
	FROM JSON_TABLE(v_before, '$[*]' COLUMNS (
		no    TEXT   PATH '$[0]' ERROR ON EMPTY ERROR ON ERROR,
		fence BIGINT PATH '$[1]' ERROR ON EMPTY ERROR ON ERROR)) f
	STRAIGHT_JOIN loot_session s ON s.session_no = f.no COLLATE utf8mb4_nopad_bin
	` + mysql.MemberListJoin + `
	LEFT JOIN loot_intent c ON c.session_no = s.session_no AND s.fence = f.fence + 1;
`
	const size, n = 5, 6000
	for _, v := range variants {
		b.Run("variant="+v.name, func(b *testing.B) {
			store, err := mysql.Open(ctx, testserver.MariaDB(b), mysql.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			db := store.DB()
			db.SetMaxOpenConns(1)
			if v.name == "merged-claims" {
				if err := replaceRoutine("loot_begin_settle_batch_v3", func(body string) string {
					return splice(body, heads[2], heads[4], mergedRead)
				})(db); err != nil {
					b.Fatal(err)
				}
			} else if v.name != "whole" {
				if err := replaceRoutine("loot_begin_settle_batch_v3", cut(v.from, v.to))(db); err != nil {
					b.Fatal(err)
				}
			}
			bulkSessions(b, db, "ref", "S-", n, settleTeam, settleTeam, -time.Second)
			c0 := serverCPU(b)
			for lo := 0; lo < n; lo += size {
				var batch strings.Builder
				batch.WriteByte('[')
				for i := lo; i < lo+size; i++ {
					if i > lo {
						batch.WriteByte(',')
					}
					fmt.Fprintf(&batch, `["S-%d",60000000]`, i)
				}
				batch.WriteByte(']')
				rows, err := db.QueryContext(ctx, "CALL loot_begin_settle_batch_v3(?)", batch.String())
				if err != nil {
					b.Fatalf("variant %s: %v (%s)", v.name, err, "go test ./ref/loot/mysql -run '^$' -bench BenchmarkBeginBatchStatements -benchtime 1x")
				}
				for rows.Next() || rows.NextResultSet() {
				}
				if err := rows.Close(); err != nil {
					b.Fatalf("variant %s: %v", v.name, err)
				}
			}
			b.ReportMetric(float64((serverCPU(b)-c0).Microseconds())/float64(n/size), "us/call")
		})
	}
}
