package mysql

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// serverIsolations are the server isolation levels (DSN parameters) the
// internal tests run the store under, as the external tests' isolations.
var serverIsolations = []struct{ name, params string }{
	{"repeatable-read", ""},
	{"read-committed", "?tx_isolation=%27READ-COMMITTED%27"},
}

// openAtNow opens a Store on a fresh database of the test server (params
// appended to its DSN), closed at the test's end, and returns it with the
// database's now: the tests that race a deadline set it from there.
func openAtNow(t *testing.T, params string, opts Options) (*Store, time.Time) {
	t.Helper()
	s, err := Open(t.Context(), testserver.MariaDB(t)+params, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var now time.Time
	if err := s.db.QueryRowContext(t.Context(), "SELECT NOW(6)").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return s, now
}
