package loot_test

import (
	"context"
	"errors"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// fault is what a chaos call does.
type fault uint8

const (
	noFault    fault = iota
	failBefore       // the call fails with no effect
	loseAnswer       // the effect lands, the answer is lost
)

// chaos decides each effect call's fault from the method's name; a nil
// next decides none.
type chaos struct{ next func(method string) fault }

// once faults the first call of method, and nothing else.
func once(method string, f fault) *chaos {
	done := false
	return &chaos{next: func(m string) fault {
		if m != method || done {
			return noFault
		}
		done = true
		return f
	}}
}

var errNetwork = errors.New("connection reset")

// call runs f, the method's effect, under the fault chaos decides.
func call[T any](c *chaos, method string, f func() (T, error)) (T, error) {
	var zero T
	ft := noFault
	if c.next != nil {
		ft = c.next(method)
	}
	switch ft {
	case failBefore:
		return zero, errNetwork
	case loseAnswer:
		_, _ = f()
		return zero, errNetwork
	}
	return f()
}

// chaosStore runs every write of the Store under chaos (its reads stay
// clean: the checks read through them).
type chaosStore struct {
	loot.Store
	c *chaos
}

// created pairs a value with a created flag, for the methods that
// return both.
type created[T any] struct {
	v  T
	cr bool
}

func (s chaosStore) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	r, err := call(s.c, "Open", func() (created[loot.Session], error) {
		sess, cr, err := s.Store.Open(ctx, spec)
		return created[loot.Session]{sess, cr}, err
	})
	return r.v, r.cr, err
}

func (s chaosStore) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	return call(s.c, "StartClaiming", func() (loot.Session, error) { return s.Store.StartClaiming(ctx, no) })
}

func (s chaosStore) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	r, err := call(s.c, "Claim", func() (created[loot.Claim], error) {
		c, cr, err := s.Store.Claim(ctx, no, p, in)
		return created[loot.Claim]{c, cr}, err
	})
	return r.v, r.cr, err
}

func (s chaosStore) Cancel(ctx context.Context, no string) (loot.Session, error) {
	return call(s.c, "Cancel", func() (loot.Session, error) { return s.Store.Cancel(ctx, no) })
}

func (s chaosStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	return call(s.c, "BeginSettle", func() (loot.Frozen, error) { return s.Store.BeginSettle(ctx, no, lease) })
}

func (s chaosStore) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	return call(s.c, "RecordGrants", func() (loot.Session, error) { return s.Store.RecordGrants(ctx, d) })
}

func (s chaosStore) MarkDelivered(ctx context.Context, no string) (loot.Grant, error) {
	return call(s.c, "MarkDelivered", func() (loot.Grant, error) { return s.Store.MarkDelivered(ctx, no) })
}

func (s chaosStore) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	return call(s.c, "LeaseGrants", func() ([]loot.Grant, error) { return s.Store.LeaseGrants(ctx, limit, b) })
}

func (s chaosStore) Overdue(ctx context.Context, limit int) ([]string, error) {
	return call(s.c, "Overdue", func() ([]string, error) { return s.Store.Overdue(ctx, limit) })
}

// chaosInventory runs the inventory under chaos.
type chaosInventory struct {
	loot.Inventory
	c *chaos
}

func (inv chaosInventory) Deliver(ctx context.Context, g loot.Grant) error {
	_, err := call(inv.c, "Deliver", func() (struct{}, error) { return struct{}{}, inv.Inventory.Deliver(ctx, g) })
	return err
}
