package memory

import (
	"sync"
	"time"
)

// Clock is a virtual clock for the store (the database's clock) or the lock
// (the lock service's). It moves only when told; safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (d < 0 panics: clocks here do not go
// back).
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("memory.Clock.Advance: negative duration")
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
