package mysql_test

import (
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestNilContextLeavesThePoolUsable: a nil context used to panic inside
// database/sql while it held the pool's lock, which the caller's recover
// never released: every later call hung.
func TestNilContextLeavesThePoolUsable(t *testing.T) {
	const conns = 2
	st, err := mysql.Open(t.Context(), testserver.MariaDB(t), mysql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.DB().SetMaxOpenConns(conns)
	if loottest.RunNilContext(t, st, st.Inventory(), conns+1) {
		st.Close() // not when the pool hangs: Close would too
	}
}
