package lootref_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// TestReadSeesEverySessionRowUnderANumber: loot-ref on a store whose
// session table has no unique key on the number (a repeated Open inserts
// another OPEN row and returns the first, created false, as an INSERT
// without ON CONFLICT followed by a SELECT of the first row would) fails
// ForwardOnly in duplicate-claim, whose opens arrive again, because Read
// reports the further rows (SessionRows) as Record.Others; the same store
// read one row per number (rowsHidden: Read before Others) holds every
// property, since the Service never touches the extra rows.
func TestReadSeesEverySessionRowUnderANumber(t *testing.T) {
	const run = "go test -run '^TestReadSeesEverySessionRowUnderANumber$' ./impls/loot/lootref/"
	f := lootfaults.Families.DuplicateClaim
	caught := 0
	for seed := uint64(1); seed <= engine.DefaultMatrixN; seed++ {
		s := lootfaults.World.Generate(f, seed)
		r := lootprops.Judge(lootfaults.Run(noUniqueKey{}, s, engine.RunOptions{}))
		if slices.Contains(r.Failed(), lootfaults.Properties.ForwardOnly) {
			caught++
		}
		if hidden := lootprops.Judge(lootfaults.Run(noUniqueKey{rowsHidden: true}, s, engine.RunOptions{})); len(hidden.Failed()) > 0 {
			t.Fatalf("loot-ref on a store without the key, read one row per number, fails %v at %s seed %d (%s)\n%v", hidden.Failed(), f, seed, run, hidden)
		}
	}
	if caught == 0 {
		t.Errorf("loot-ref on a store without a unique session number passes ForwardOnly in %d %s schedules from seed 1 (%s)", engine.DefaultMatrixN, f, run)
	}
	t.Logf("caught in %d of %d %s schedules", caught, engine.DefaultMatrixN, f)
}

// noUniqueKey is loot-ref on rowsStore; rowsHidden hides SessionRows.
type noUniqueKey struct{ rowsHidden bool }

func (d noUniqueKey) Name() string { return "loot-ref-no-unique-session-no" }

func (d noUniqueKey) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	st := &rowsStore{Store: memory.NewStore(db.Now), extra: map[string][]loot.Session{}}
	if d.rowsHidden {
		return lootref.NewCluster(hiddenRows{st}, db, nil)
	}
	return lootref.NewCluster(st, db, nil)
}

// rowsStore is a memory store whose Open of a session it has inserts
// another row, OPEN, beside it (kept in extra, which nothing but
// SessionRows reads).
type rowsStore struct {
	lootref.Store
	mu    sync.Mutex
	extra map[string][]loot.Session
}

var _ lootref.SessionRows = (*rowsStore)(nil)

func (s *rowsStore) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	sess, created, err := s.Store.Open(ctx, spec)
	if err == nil && !created {
		s.mu.Lock()
		row := sess
		row.Status = loot.StatusOpen
		s.extra[spec.No] = append(s.extra[spec.No], row)
		s.mu.Unlock()
	}
	return sess, created, err
}

func (s *rowsStore) SessionRows(ctx context.Context, no string) ([]loot.Session, error) {
	first, err := s.Session(ctx, no)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]loot.Session{first}, s.extra[no]...), nil
}

// hiddenRows is a rowsStore whose SessionRows Read cannot see.
type hiddenRows struct{ lootref.Store }
