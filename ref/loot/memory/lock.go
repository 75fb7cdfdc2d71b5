package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Lock is an in-process loot.Lock whose ttls are judged by its own clock
// (the lock service's, which need not agree with the store's). Acquire and
// Release are each one atomic step, as Redis SET NX PX and a
// compare-and-delete script are.
type Lock struct {
	mu   sync.Mutex
	now  func() time.Time
	held map[string]lease
}

type lease struct {
	token string
	until time.Time
}

var _ loot.Lock = (*Lock)(nil)

// NewLock returns a lock service whose clock is now.
func NewLock(now func() time.Time) *Lock {
	if now == nil {
		panic("memory.NewLock: nil clock")
	}
	return &Lock{now: now, held: map[string]lease{}}
}

// Acquire implements loot.Lock.
func (l *Lock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("memory: lock: %w", err)
	}
	if ttl <= 0 || token == "" {
		return false, fmt.Errorf("memory: lock %q: ttl %v, token %q: %w", key, ttl, token, loot.ErrBadArgument)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if h, ok := l.held[key]; ok && now.Before(h.until) {
		return false, nil
	}
	l.held[key] = lease{token: token, until: now.Add(ttl)}
	return true, nil
}

// Release implements loot.Lock: compare-and-delete in one step. A key
// whose ttl ended is gone (as in Redis), whoever asks.
func (l *Lock) Release(ctx context.Context, key, token string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("memory: unlock: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.held[key]
	if !ok {
		return false, nil
	}
	if !l.now().Before(h.until) {
		delete(l.held, key) // expired: Redis would have dropped it already
		return false, nil
	}
	if h.token != token {
		return false, nil
	}
	delete(l.held, key)
	return true, nil
}
