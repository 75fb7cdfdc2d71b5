package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// TestStoreConformance runs the store suite on a fresh file per subtest.
// Break closes the handle's *sql.DB behind the Store's back (without setting
// its closed flag): the nearest a test gets to the file descriptor vanishing,
// and the next call must report it.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		path := filepath.Join(t.TempDir(), "records.db")
		return storetest.Harness{
			Open: func(t *testing.T) ref.PendingStore {
				s, err := Open(path)
				if err != nil {
					t.Fatalf("Open(%s): %v", path, err)
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
}

// BenchmarkStore measures claim+commit on a SQLite file at 1, 16 and 64
// concurrent callers on one handle (see storetest.BenchClaimCommit). Every
// commit fsyncs the WAL (synchronous=FULL), so the disk bounds it.
func BenchmarkStore(b *testing.B) {
	for _, conc := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("backend=sqlite/conc=%d", conc), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			storetest.BenchClaimCommit(b, s, conc)
		})
	}
}
