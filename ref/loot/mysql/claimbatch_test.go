package mysql_test

import (
	"testing"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestStoreConformanceBatched runs the loot Store suite on stores opened
// with Options.Batch, whose claims (and, as they are built, settles and
// deliveries) are coalesced: every loot property holds there as alone.
// The harness is TestStoreConformance's; its login hook hands over the
// database's DSN, which the batched stores open.
func TestStoreConformanceBatched(t *testing.T) {
	loottest.Run(t, func(t *testing.T) loottest.Harness {
		var dsn string
		h := harness("", func(_ *testing.T, root string) string {
			dsn = root
			return root
		})(t)
		h.Open = func(t *testing.T) loot.Store {
			s, err := mysql.Open(t.Context(), dsn, mysql.Options{ClockTable: clockTable, Batch: true})
			if err != nil {
				t.Fatalf("mysql.Open with Batch: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return h
	})
}
