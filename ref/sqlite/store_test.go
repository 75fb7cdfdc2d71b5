package sqlite

import (
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
