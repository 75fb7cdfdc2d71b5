package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

func BenchmarkZZMicro(b *testing.B) {
	dsn := testserver.MariaDB(b)
	ctx := context.Background()
	s, err := mysql.Open(ctx, dsn, mysql.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	db := s.DB()
	if _, _, err := s.Open(ctx, loot.Spec{No: "X", Dungeon: "D", Loot: "L", Quantity: 2, Deadline: time.Now().Add(time.Hour), Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2, 3}}); err != nil {
		b.Fatal(err)
	}
	s.StartClaiming(ctx, "X")
	conn, _ := db.Conn(ctx)
	defer conn.Close()
	for _, c := range []struct{ name, q string }{
		{"select1", "SELECT 1"},
		{"do1", "DO 1"},
		{"call-begin-notdue", "CALL loot_begin_settle_v1('X', 60000000)"},
		{"readsession", "SELECT s.session_no, (SELECT GROUP_CONCAT(m.player_id ORDER BY m.player_id SEPARATOR ',') FROM loot_member m WHERE m.session_no = s.session_no) FROM loot_session s WHERE s.session_no = 'X'"},
		{"tx-empty", "START TRANSACTION; COMMIT"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := serverCPU(b)
			for range b.N {
				rows, err := conn.QueryContext(ctx, c.q)
				if err != nil {
					b.Fatal(err)
				}
				for {
					for rows.Next() {
					}
					if !rows.NextResultSet() {
						break
					}
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				rows.Close()
			}
			b.ReportMetric(float64((serverCPU(b)-cpu0).Microseconds())/float64(b.N), "db-cpu-us/op")
		})
	}
}
