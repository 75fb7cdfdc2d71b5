package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// TestStoreConformance runs the store suite on a fresh file per subtest,
// unbatched and batched. Break closes the handle's *sql.DB behind the
// Store's back (without setting its closed flag): the nearest a test gets to
// the file descriptor vanishing, and the next call must report it.
func TestStoreConformance(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				path := filepath.Join(t.TempDir(), "records.db")
				return storetest.Harness{
					Open: func(t *testing.T) ref.PendingStore {
						s, err := OpenWith(path, Options{Batch: batch})
						if err != nil {
							t.Fatalf("OpenWith(%s, Batch: %v): %v", path, batch, err)
						}
						return s
					},
					Break: func(t *testing.T, s ref.PendingStore) {
						if err := s.(*Store).h.db.Close(); err != nil {
							t.Fatalf("break: closing the handle's database: %v", err)
						}
					},
				}
			})
		})
	}
}

// TestDeliveredClaimer runs storetest.RunDeliveredClaimer unbatched and
// batched, each on a fresh file per subtest.
func TestDeliveredClaimer(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			storetest.RunDeliveredClaimer(t, func(t *testing.T) storetest.Harness {
				path := filepath.Join(t.TempDir(), "records.db")
				return storetest.Harness{Open: func(t *testing.T) ref.PendingStore {
					s, err := OpenWith(path, Options{Batch: batch})
					if err != nil {
						t.Fatalf("OpenWith(%s, Batch: %v): %v", path, batch, err)
					}
					return s
				}}
			})
		})
	}
}

// BenchmarkStore measures claim+commit on a SQLite file at 1, 16 and 64
// concurrent callers on one handle, one statement per call (batch=off) and
// coalesced (batch=on); see storetest.BenchClaimCommit. Every transaction
// fsyncs the WAL (synchronous=FULL), so the disk bounds the unbatched form.
func BenchmarkStore(b *testing.B) {
	for _, batch := range []bool{false, true} {
		for _, conc := range []int{1, 16, 64} {
			name := fmt.Sprintf("backend=sqlite/batch=%s/conc=%d", map[bool]string{false: "off", true: "on"}[batch], conc)
			b.Run(name, func(b *testing.B) {
				s, err := OpenWith(filepath.Join(b.TempDir(), "bench.db"), Options{Batch: batch})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				storetest.BenchClaimCommit(b, s, conc)
			})
		}
	}
}

// TestOpenErrorsNameTheStep: a file that cannot be opened is reported as
// opening it, and a failed schema statement by what it was creating, never
// by its SQL.
func TestOpenErrorsNameTheStep(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir", "records.db")
	if _, err := Open(missing); err == nil || !strings.Contains(err.Error(), "sqlite: open "+missing+": ") || strings.Contains(err.Error(), "creat") {
		t.Errorf("Open in a missing directory = %v; want it reported as opening the file; reproduce: go test ./ref/sqlite -run %s", err, t.Name())
	}
	// A table of the same name without lease_until: the index step fails.
	foreign := filepath.Join(t.TempDir(), "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE onceproof_records (key BLOB PRIMARY KEY, state INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(foreign)
	if err == nil || !strings.Contains(err.Error(), "creating index onceproof_records_pending: ") ||
		strings.Contains(err.Error(), "CREATE") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open on a foreign onceproof_records = %v; want one line naming the step (creating index onceproof_records_pending) without the SQL; reproduce: go test ./ref/sqlite -run %s", err, t.Name())
	}
}
