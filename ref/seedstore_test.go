package ref

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// seedMemStore is the source document's MemStore, verbatim but for its name.
type seedMemStore struct {
	mu sync.Mutex
	m  map[uint64]State
}

func (s *seedMemStore) Begin(key uint64) (State, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[key]; ok {
		return st, false
	}
	s.m[key] = StateGranted
	return StateGranted, true
}

func (s *seedMemStore) Commit(key uint64, st State) {
	s.mu.Lock()
	s.m[key] = st
	s.mu.Unlock()
}

func TestFromSeedStoreRunsTheSeedSettler(t *testing.T) {
	seed := &seedMemStore{m: map[uint64]State{}}
	s := NewSettler(NewWindow(100*time.Millisecond, 4), FromSeedStore(seed))
	fp := FingerprintOf(0x0103, 42, 7, 9001)
	if _, fresh := s.Settle(fp, base); !fresh {
		t.Fatal("first settle was not fresh")
	}
	if st, fresh := s.Settle(fp, base.Add(time.Second)); fresh || st != StateDelivered {
		t.Fatalf("late retry = (%v, %v), want (Delivered, false)", st, fresh)
	}
	if got := seed.m[uint64(fp)]; got != StateDelivered {
		t.Fatalf("seed store holds %v for the key, want Delivered", got)
	}
	withSink := NewSettler(NewWindow(time.Second, 1), FromSeedStore(seed), WithSink(NewMemSink()))
	if _, err := withSink.Recover(context.Background(), base); !errors.Is(err, ErrNoPending) {
		t.Fatalf("Recover on an adapted seed store: %v, want ErrNoPending", err)
	}
}

func TestFromSeedStoreCommitIsForwardOnlyAndNeedsAClaim(t *testing.T) {
	seed := &seedMemStore{m: map[uint64]State{}}
	st := FromSeedStore(seed)
	ctx := context.Background()
	k := KeyOf(1, 2)
	if err := st.Commit(ctx, k, StateDelivered); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Commit of an unclaimed key: %v, want ErrNotFound", err)
	}
	k2 := KeyOf(3, 4)
	if _, created, err := st.Begin(ctx, Claim{Key: k2}); err != nil || !created {
		t.Fatalf("Begin = created %v, %v", created, err)
	}
	if err := st.Commit(ctx, k2, StateDelivered); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, k2, StateGranted); err != nil {
		t.Fatal(err)
	}
	if got := seed.m[k2.Hi]; got != StateDelivered {
		t.Fatalf("state after a backward Commit = %v, want Delivered", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := st.Begin(cctx, Claim{Key: k2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Begin with a cancelled ctx: %v", err)
	}
}
