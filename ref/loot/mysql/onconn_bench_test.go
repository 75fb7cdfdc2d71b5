package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// BenchmarkLootOneConn is the server's CPU per op, head to head on one
// connection each: the reference's (op=claim: Store.Claim, one CALL;
// op=settle: Store.BeginSettle, loot.Decide and Store.RecordGrants, a
// CALL each) and the document's (submitIntent, a SELECT then the upsert;
// its settle as BenchmarkLoot's, 5 statements), in rounds of oneConnRound
// fresh ops, the two sides alternating, each side in its own database of
// the same server. Alternating rounds puts both sides under the same load,
// which moves the server's CPU per op far less than it moves ops/s: the
// ratio ref/doc is what to read (cpu-ratio).
//
//	ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkLootOneConn -benchtime 2000x ./ref/loot/mysql
func BenchmarkLootOneConn(b *testing.B) {
	for _, op := range []string{"claim", "settle"} {
		b.Run("op="+op, func(b *testing.B) { benchOneConn(b, op) })
	}
}

func benchOneConn(b *testing.B, op string) {
	ctx := context.Background()
	refDSN, docDSN := testserver.MariaDB(b), testserver.MariaDB(b)
	store, err := mysql.Open(ctx, refDSN, mysql.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	cfg, err := gomysql.ParseDSN(docDSN + "?parseTime=true&loc=UTC&time_zone=%27%2B00:00%27&interpolateParams=true")
	if err != nil {
		b.Fatal(err)
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		b.Fatal(err)
	}
	raw := sql.OpenDB(conn)
	b.Cleanup(func() { raw.Close() })
	doc := docsql.New(raw)
	if err := doc.CreateSchema(ctx); err != nil {
		b.Fatal(err)
	}
	for _, db := range []*sql.DB{store.DB(), raw} {
		db.SetMaxOpenConns(1)
	}
	var sides [2]func(i int) error
	switch op {
	case "claim":
		sessions := (b.N + claimTeam - 1) / claimTeam
		bulkSessions(b, store.DB(), "ref", "S-", sessions, claimTeam, 0, time.Hour)
		bulkSessions(b, raw, "doc", "S-", sessions, claimTeam, 0, time.Hour)
		sides[0] = func(i int) error {
			_, _, err := store.Claim(ctx, fmt.Sprintf("S-%d", i/claimTeam), loot.PlayerID(i%claimTeam+1), loot.Need)
			return err
		}
		sides[1] = func(i int) error {
			return docClaim(ctx, doc, fmt.Sprintf("S-%d", i/claimTeam), loot.PlayerID(i%claimTeam+1))
		}
	case "settle":
		bulkSessions(b, store.DB(), "ref", "S-", b.N, settleTeam, settleTeam, -time.Second)
		bulkSessions(b, raw, "doc", "S-", b.N, settleTeam, settleTeam, -time.Second)
		sides[0] = func(i int) error { return refSettle(ctx, store, fmt.Sprintf("S-%d", i)) }
		sides[1] = func(i int) error { return docSettle(ctx, doc, fmt.Sprintf("S-%d", i)) }
	}
	var cpu [2]time.Duration
	b.ResetTimer()
	for lo := 0; lo < b.N; lo += oneConnRound {
		for side, do := range sides {
			c0 := serverCPU(b)
			for i := lo; i < min(lo+oneConnRound, b.N); i++ {
				if err := do(i); err != nil {
					b.Fatal(err)
				}
			}
			cpu[side] += serverCPU(b) - c0
		}
	}
	b.StopTimer()
	ref, docCPU := float64(cpu[0].Microseconds())/float64(b.N), float64(cpu[1].Microseconds())/float64(b.N)
	b.ReportMetric(ref, "ref-db-cpu-us/op")
	b.ReportMetric(docCPU, "doc-db-cpu-us/op")
	b.ReportMetric(ref/docCPU, "cpu-ratio")
}

// oneConnRound is a round's ops per side: 200 claims at ~100-200 us of
// server CPU each is 20-40 ms, a few of the 10 ms ticks the kernel counts
// a process's CPU in, so a round's reading is within a tick or two (a
// settle costs more, so fewer ticks are lost in proportion).
const oneConnRound = 200
