package ref

import (
	"context"
	"sync"
)

// Sink applies the effect of a grant (the credit) idempotently by its key.
//
// Contract:
//   - Deliver applies the effect described by payload once per key: a second
//     Deliver with a key already applied does nothing and returns nil. This is
//     what lets a retry or Recover complete a StateGranted record without ever
//     granting twice: it "checks the sink" by delivering through it.
//   - An error means "outcome unknown" (the effect may have been applied); the
//     caller leaves the record StateGranted and retries later with the same
//     key and payload.
//   - A real sink keys effects by a UNIQUE grant key in the same database as
//     the balance, so the credit and its key are written together or not at
//     all (see ref/sqlite, ref/postgres).
//   - Safe for concurrent use.
type Sink interface {
	Deliver(ctx context.Context, key Key, payload []byte) error
}

// MemSink is an in-process Sink that records each key's payload once. It is
// meant for tests and examples.
type MemSink struct {
	mu      sync.Mutex
	applied map[Key][]byte
	calls   int
}

var _ Sink = (*MemSink)(nil)

// NewMemSink returns an empty sink.
func NewMemSink() *MemSink { return &MemSink{applied: make(map[Key][]byte)} }

// Deliver implements Sink.
func (s *MemSink) Deliver(ctx context.Context, key Key, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if _, ok := s.applied[key]; !ok {
		s.applied[key] = append([]byte(nil), payload...)
	}
	return nil
}

// Applied reports whether key's effect was applied, and its payload.
func (s *MemSink) Applied(key Key) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.applied[key]
	return p, ok
}

// Len returns how many distinct keys were applied.
func (s *MemSink) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.applied)
}

// Calls returns how many times Deliver ran (applied or not).
func (s *MemSink) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// CommittingSink is a Sink whose Deliver also moves the key's record in the
// Settler's Store to StateDelivered, in the same transaction as the effect
// (the sinks ref/sqlite, ref/postgres and ref/redis build from a Store can).
// When CommitsRecord reports true the Settler skips its own Commit after
// Deliver: one round trip fewer per grant, and no window in which the effect
// is applied but the record still says Granted. It must only be given to a
// Settler whose Store is the one the sink commits to.
type CommittingSink interface {
	Sink
	CommitsRecord() bool
}
