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

// BenchmarkLootOneConn is the server's CPU per claim, head to head on
// one connection each: the reference's Store.Claim (one CALL) and the
// document's submitIntent (a SELECT, then the upsert), in rounds of
// oneConnRound fresh claims, the two sides alternating, each side in its
// own database of the same server. Alternating rounds puts both sides
// under the same load, which moves the server's CPU per op far less than
// it moves ops/s: the ratio ref/doc is what to read (cpu-ratio).
//
//	ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^$' -bench BenchmarkLootOneConn -benchtime 2000x ./ref/loot/mysql
func BenchmarkLootOneConn(b *testing.B) {
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
	sessions := (b.N + claimTeam - 1) / claimTeam
	bulkSessions(b, store.DB(), "ref", "S-", sessions, claimTeam, 0, time.Hour)
	bulkSessions(b, raw, "doc", "S-", sessions, claimTeam, 0, time.Hour)
	sides := []func(no string, p loot.PlayerID) error{
		func(no string, p loot.PlayerID) error {
			_, _, err := store.Claim(ctx, no, p, loot.Need)
			return err
		},
		func(no string, p loot.PlayerID) error {
			ok, err := doc.SubmitIntent(ctx, docsql.NewIntent(no, int64(p), "NEED", 0, time.Now().UTC()))
			if err == nil && !ok {
				err = fmt.Errorf("claim %s by %d refused", no, p)
			}
			return err
		},
	}
	var cpu [2]time.Duration
	b.ResetTimer()
	for lo := 0; lo < b.N; lo += oneConnRound {
		for side, claim := range sides {
			c0 := serverCPU(b)
			for i := lo; i < min(lo+oneConnRound, b.N); i++ {
				if err := claim(fmt.Sprintf("S-%d", i/claimTeam), loot.PlayerID(i%claimTeam+1)); err != nil {
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

// oneConnRound is a round's claims per side: 200 claims at ~100-150 us of
// server CPU each is 20-30 ms, a few of the 10 ms ticks the kernel counts
// a process's CPU in, so a round's reading is within a tick or two.
const oneConnRound = 200
