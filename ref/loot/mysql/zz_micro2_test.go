package mysql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

func BenchmarkZZParts(b *testing.B) {
	dsn := testserver.MariaDB(b)
	ctx := context.Background()
	s, err := mysql.Open(ctx, dsn, mysql.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 3000
	bulkSessions(b, s.DB(), "ref", "P-", n, settleTeam, settleTeam, -time.Second)
	fzs := make([]loot.Frozen, n)
	ds := make([]loot.Decision, n)
	b.Run("begin", func(b *testing.B) {
		cpu0 := serverCPU(b)
		for i := range n {
			fzs[i], err = s.BeginSettle(ctx, fmt.Sprintf("P-%d", i), time.Minute)
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((serverCPU(b)-cpu0).Microseconds())/float64(n), "db-cpu-us/call")
	})
	for i := range n {
		ds[i] = decide(&testing.T{}, fzs[i])
	}
	b.Run("record", func(b *testing.B) {
		cpu0 := serverCPU(b)
		for i := range n {
			if _, err := s.RecordGrants(ctx, ds[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((serverCPU(b)-cpu0).Microseconds())/float64(n), "db-cpu-us/call")
	})
}
