package ref

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// MemStore is an in-process Store. It never fails (but honours a cancelled
// context), and it is durable only as long as the process: it is the default
// for tests and for the proof harness, where "durable" means "survives a
// crash of the node, not of the cluster". A real deployment backs the same
// interface with a UNIQUE index (ref/sqlite, ref/postgres) or one atomic Lua
// script (ref/redis).
type MemStore struct {
	mu sync.Mutex
	m  map[Key]*memRecord
}

type memRecord struct {
	st      State
	payload []byte
	lease   time.Time
}

var _ PendingStore = (*MemStore)(nil)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{m: make(map[Key]*memRecord)} }

// Begin implements Store.
func (s *MemStore) Begin(ctx context.Context, c Claim) (State, bool, error) {
	if err := ctx.Err(); err != nil {
		return StateNew, false, fmt.Errorf("ref: memstore begin: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.m[c.Key]; ok {
		return r.st, false, nil
	}
	s.m[c.Key] = &memRecord{st: StateGranted, payload: append([]byte(nil), c.Payload...), lease: c.LeaseUntil}
	return StateGranted, true, nil
}

// Commit implements Store.
func (s *MemStore) Commit(ctx context.Context, key Key, st State) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ref: memstore commit: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[key]
	if !ok {
		return fmt.Errorf("ref: memstore commit %v: %w", key, ErrNotFound)
	}
	if st > r.st {
		r.st = st
		if st == StateDelivered {
			r.payload = nil // nothing will ever need it again
		}
	}
	return nil
}

// Pending implements PendingStore.
func (s *MemStore) Pending(ctx context.Context, now time.Time, limit int) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: memstore pending: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	for k, r := range s.m {
		if r.st == StateGranted && !r.lease.After(now) {
			out = append(out, Record{Key: k, State: r.st, Payload: append([]byte(nil), r.payload...), LeaseUntil: r.lease})
		}
	}
	// Oldest lease first, then by key: the order real stores' lease index
	// gives, and one that does not depend on map iteration, so a run that
	// recovers several records is the same run every time.
	slices.SortFunc(out, func(a, b Record) int {
		return cmp.Or(a.LeaseUntil.Compare(b.LeaseUntil), cmp.Compare(a.Key.Hi, b.Key.Hi), cmp.Compare(a.Key.Lo, b.Key.Lo))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Len returns how many records the store holds.
func (s *MemStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

var _ DeliveredClaimer = (*MemStore)(nil)

// BeginDelivered implements DeliveredClaimer.
func (s *MemStore) BeginDelivered(ctx context.Context, c Claim) (State, bool, error) {
	if err := ctx.Err(); err != nil {
		return StateNew, false, fmt.Errorf("ref: memstore begin: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.m[c.Key]; ok {
		return r.st, false, nil
	}
	s.m[c.Key] = &memRecord{st: StateDelivered, lease: c.LeaseUntil}
	return StateDelivered, true, nil
}
